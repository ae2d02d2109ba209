import { describe } from 'vitest';
import { sentryProvider, signSentry } from '../../src/catalogue/providers/sentry.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Sentry publishes no verification library or test vector; the reference is its documented recipe:
// https://docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature
const SECRET = 'sentry-client-secret';

describe('sentry', () => {
  itVerifiesBodyHmac({
    provider: sentryProvider({ secrets: [SECRET] }),
    sign: signSentry,
    reference: { by: 'Sentry', digest: 'sha256', encoding: 'hex' },
    secret: SECRET,
    body: JSON.stringify({
      action: 'created',
      installation: { uuid: 'a8e5d37a-696c-4c54-adb5-b3f28d64c7de' },
      data: { issue: { id: '1117540176', shortId: 'API-1' } },
      actor: { type: 'application', id: 'sentry' },
    }),
    signatureHeader: 'sentry-hook-signature',
    headers: (signature) => ({
      'Sentry-Hook-Signature': signature,
      'Sentry-Hook-Resource': 'issue',
      'Sentry-Hook-Timestamp': '1733356800',
      'Request-ID': 'e4874d28-a2a4-4b94-8b3e-2a0c0e0a1b2c',
    }),
    event: {
      eventId: 'e4874d28-a2a4-4b94-8b3e-2a0c0e0a1b2c',
      type: 'issue.created',
      headers: { 'sentry-hook-resource': 'issue', 'sentry-hook-timestamp': '1733356800' },
    },
    keyless: { header: 'request-id' },
  });
});
