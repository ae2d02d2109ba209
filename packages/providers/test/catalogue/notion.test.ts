import { describe } from 'vitest';
import { notionProvider, signNotion } from '../../src/catalogue/providers/notion.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Notion publishes no verification library or test vector; the reference is its documented recipe:
// https://developers.notion.com/reference/webhooks#step-3-validating-event-payloads-recommended
const SECRET = 'secret_notion-verification-token';

describe('notion', () => {
  itVerifiesBodyHmac({
    provider: notionProvider({ secrets: [SECRET] }),
    sign: signNotion,
    reference: { by: 'Notion', digest: 'sha256', encoding: 'hex', prefix: 'sha256=' },
    secret: SECRET,
    body: JSON.stringify({
      id: '367cba44-b6f3-4c92-81e7-6a2e9659efd4',
      timestamp: '2026-12-01T12:00:00.000Z',
      workspace_id: '13950b26-c203-4f3b-b97d-93ec06319565',
      type: 'page.properties_updated',
      entity: { id: '153104cd-477e-809d-8dc4-ff2d96ae3090', type: 'page' },
      data: { updated_properties: ['title'] },
    }),
    signatureHeader: 'x-notion-signature',
    headers: (signature) => ({ 'x-notion-signature': signature }),
    event: { eventId: '367cba44-b6f3-4c92-81e7-6a2e9659efd4', type: 'page.properties_updated', headers: {} },
    keyless: { body: '{"type":"page.created"}' },
  });
});
