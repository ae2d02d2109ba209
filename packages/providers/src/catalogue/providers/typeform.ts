import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
export const TYPEFORM_FACTS: ProviderFacts = {
  scheme: "Typeform-Signature: sha256=<base64 HMAC-SHA256 of the raw body>, keyed with the webhook's secret",
  eventKey: "the body's event_id, the same across retries; refused as invalid_payload when absent",
  eventType: "the body's event_type (form_response, form_response_partial)",
  toleranceSeconds: undefined,
  retries:
    'on 429, 408, 503 or 423 every 2-3 minutes for 10 hours; other failures (and a 30 s timeout) with backoff; a 410 Gone or 404 disables the webhook at once',
  quirks: 'base64 where most senders use hex, behind sha256=',
  requiredOptions: [],
  docs: 'https://www.typeform.com/developers/webhooks/secure-your-webhooks/',
};

/** The catalogue's typeform: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'typeform',
  facts: TYPEFORM_FACTS,
  template: {
    type: 'hmac',
    hmac: {
      header: 'Typeform-Signature',
      prefix: 'sha256=',
      algorithm: 'sha256',
      encoding: 'base64',
      padding: 'canonical',
    },
    eventKey: { pointer: '/event_id' },
    eventType: { pointer: '/event_type', required: true },
  },
  eventFacts: [{ label: 'Form', paths: ['/form_response/form_id'] }],
  subject: ['/form_response/form_id', '/form_response/token'],
  excerpt: ['/event_id', '/event_type', '/form_response/form_id', '/form_response/submitted_at'],
} satisfies CatalogueDefinition;

/**
 * Typeform: `Typeform-Signature: sha256=<base64>`, the HMAC-SHA256 of the raw body keyed with the webhook's secret
 * (base64, where most senders use hex). Nothing else is signed.
 *
 * Event key: the body's `event_id`. Type: its `event_type`, e.g. `form_response`.
 *
 * @example
 * const typeform = typeformProvider({ secrets: [process.env.TYPEFORM_WEBHOOK_SECRET] });
 */
export function typeformProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('typeform', definition.template, options);
}

/** The `Typeform-Signature` header value Typeform would send for this body, for tests and the dev CLI. */
export const signTypeform = bodySigner('typeform', definition.template);
