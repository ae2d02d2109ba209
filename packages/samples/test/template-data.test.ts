import {
  CATALOGUE,
  createSourceProvider,
  sourcesFileSpec,
  type SignedRequest,
} from '@webhook-inbox/providers';
import { sampleCredentials } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { catalogueDelivery, catalogueSampleType } from '../src/index.ts';

// The catalogue providers declared as template data (the providers' catalogue/template-data.ts): each declaration is a source a
// user could write in the sources file, and a user who writes it gets the catalogue provider's events.

const TEMPLATED = CATALOGUE.filter((entry) => entry.template !== undefined);
const NOW = new Date();

function requestOf(delivery: { body: string; headers: Record<string, string> }): SignedRequest {
  const headers = new Headers(delivery.headers);
  return { rawBody: Buffer.from(delivery.body), header: (name) => headers.get(name), method: 'POST' };
}

describe('catalogue providers as template data', () => {
  it('include every body-HMAC and Svix provider', () => {
    expect(TEMPLATED.map((entry) => entry.type)).toEqual(
      expect.arrayContaining([
        'bitbucket',
        'clerk',
        'github',
        'intercom',
        'jira',
        'resend',
        'segment',
        'sentry',
        'typeform',
        'vercel',
        'woocommerce',
      ]),
    );
  });

  it.each(TEMPLATED.map((entry) => [entry.type, entry] as const))(
    '%s: its template is a valid source of the sources file, and verifies its sample as the catalogue does',
    (type, entry) => {
      const { secret } = sampleCredentials(entry);
      const parsed = sourcesFileSpec.safeParse({
        sources: { [`${type}-user`]: { ...entry.template, secrets: [secret] } },
      });
      expect(parsed.success, parsed.error?.message).toBe(true);

      const user = createSourceProvider({ ...parsed.data!.sources[`${type}-user`]!, name: type }, 300);
      const catalogue = entry.create({ secrets: [secret] });
      const delivery = catalogueDelivery(type, { secret, type: catalogueSampleType(type)!, now: NOW });
      expect(delivery).toBeDefined();
      const ours = catalogue.verify(requestOf(delivery!), NOW);
      expect(user.verify(requestOf(delivery!), NOW)).toEqual(ours);
      expect({ key: ours.eventId, type: ours.type }).toEqual({ key: delivery!.key, type: delivery!.type });
    },
  );
});
