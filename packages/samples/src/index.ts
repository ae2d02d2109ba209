import { CATALOGUE } from '@webhook-inbox/providers';
import { BUSINESS_DELIVERIES } from './business.ts';
import { DEVELOPER_DELIVERIES } from './developer.ts';
import { MESSAGING_DELIVERIES } from './messaging.ts';
import { PAYMENT_DELIVERIES } from './payments.ts';
import type { CatalogueDelivery, DeliveryBuilder, DeliveryInput } from './shared.ts';
import { templatedBuilder } from './templated.ts';

// A signed delivery for each catalogue provider, in the provider's documented shape: what `inbox send`, the
// receiver's end-to-end test and the verification bench post. The coded providers' are written here by category,
// signed with the provider's own sign function; a templated provider without one written here gets its delivery
// built from its template and its module's `sample` (templated.ts). Nothing of `@webhook-inbox/providers` imports
// them: a service that verifies does not install them.

const WRITTEN: Record<string, DeliveryBuilder> = {
  ...DEVELOPER_DELIVERIES,
  ...BUSINESS_DELIVERIES,
  ...MESSAGING_DELIVERIES,
  ...PAYMENT_DELIVERIES,
};

const BUILDERS: Record<string, DeliveryBuilder> = {
  ...Object.fromEntries(
    CATALOGUE.flatMap((entry) =>
      entry.template ? [[entry.type, templatedBuilder({ ...entry, template: entry.template })]] : [],
    ),
  ),
  ...WRITTEN,
};

/** The sample event type of a catalogue type, or `undefined` when no sample is written for it. */
export function catalogueSampleType(type: string): string | undefined {
  return BUILDERS[type]?.type;
}

/**
 * A delivery of the catalogue type `type`, signed with `input.secret`; `undefined` for a type without a sample (a
 * catalogue entry added since), which `CATALOGUE_TYPES_WITHOUT_SAMPLES` lists.
 */
export function catalogueDelivery(type: string, input: DeliveryInput): CatalogueDelivery | undefined {
  return BUILDERS[type]?.build({ now: new Date(), ...input });
}

/** Catalogue types with no delivery, written or built; the end-to-end test fails while this is not empty. */
export const CATALOGUE_TYPES_WITHOUT_SAMPLES: readonly string[] = CATALOGUE.map((entry) => entry.type).filter(
  (type) => !(type in BUILDERS),
);

export type { CatalogueDelivery, DeliveryInput } from './shared.ts';
export { SAMPLE_CERTIFICATE_URLS } from './payments.ts';
export { GITHUB_SAMPLE_BODIES, isGitHubSampleType, type GitHubSampleType } from './github.ts';
export { isPaddleSampleType, PADDLE_SAMPLE_BODIES, type PaddleSampleType } from './paddle.ts';
export { isSlackSampleType, SLACK_SAMPLE_BODIES, type SlackSampleType } from './slack.ts';
export { isSquareSampleType, SQUARE_SAMPLE_BODIES, type SquareSampleType } from './square.ts';
export { isStripeSampleType, STRIPE_SAMPLE_BODIES, type StripeSampleType } from './stripe.ts';
export type { SampleBodies, Shape } from './shape.ts';
