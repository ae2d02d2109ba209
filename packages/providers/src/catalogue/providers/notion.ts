import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const NOTION_FACTS: ProviderFacts = {
  scheme:
    "X-Notion-Signature: sha256=<hex HMAC-SHA256 of the raw body>, keyed with the subscription's verification_token",
  eventKey: "the body's id (the event's id); refused as invalid_payload when absent",
  eventType: "the body's type (page.created, page.properties_updated, comment.created)",
  toleranceSeconds: undefined,
  retries:
    'retried on failure, on a schedule Notion does not state in its webhooks reference (third-party accounts ' +
    'range from 3 attempts within an hour to 8 within a day): keep event keys at least a day',
  quirks:
    'the one-time verification request of a new subscription is an unsigned POST of {"verification_token": ...}, ' +
    'refused here as missing_signature: the token it carries is the secret, to be captured outside the inbox; ' +
    'events say what changed, not how (fetch the page), and may arrive aggregated and out of order (their ' +
    'timestamp orders them)',
  requiredOptions: [],
  docs: 'https://developers.notion.com/reference/webhooks',
};

/** The catalogue's notion: its facts, its scheme as template data, its paths into payloads, its sample. */
export const definition = {
  type: 'notion',
  facts: NOTION_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'X-Notion-Signature', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' },
    eventKey: { pointer: '/id' },
    eventType: { pointer: '/type', required: true },
  },
  eventFacts: [{ label: 'Workspace', paths: ['/workspace_id'] }],
  subject: ['/entity/id'],
  caseless: { eventId: true },
  excerpt: ['/id', '/type', '/timestamp', '/workspace_id', '/entity/type', '/entity/id'],
  sample: {
    type: 'page.created',
    body: {
      timestamp: '2026-12-01T12:00:00.000Z',
      workspace_id: '13950b26-c203-4f3b-b97d-93ec06319565',
      subscription_id: '29d75c0d-5546-4414-8459-7b7a92f1fc4b',
      integration_id: '0ef2e755-4912-8096-91c1-00376a88a5ca',
      entity: { id: '153104cd-477e-809d-8dc4-ff2d96ae3090', type: 'page' },
      data: { parent: { id: '13950b26-c203-4f3b-b97d-93ec06319565', type: 'space' } },
    },
  },
} satisfies CatalogueDefinition;

/**
 * Notion integration webhooks: `X-Notion-Signature: sha256=<hex>`, the HMAC-SHA256 of the raw body keyed with the
 * subscription's `verification_token`. Nothing else is signed; the body's `timestamp` is not checked against a
 * tolerance because Notion documents none.
 *
 * Event key: the body's `id`. Type: its `type`, e.g. `page.properties_updated`.
 *
 * @example
 * const notion = notionProvider({ secrets: [process.env.NOTION_WEBHOOK_SECRET] });
 */
export function notionProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('notion', definition.template, options);
}

/** The `X-Notion-Signature` header value Notion would send for this body, for tests. */
export const signNotion = bodySigner('notion', definition.template);
