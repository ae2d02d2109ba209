import { describe } from 'vitest';
import { bitbucketProvider, signBitbucket } from '../../src/catalogue/providers/bitbucket.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Bitbucket Cloud's documented example (Manage webhooks > Secure webhooks):
// https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/
const SECRET = 'bb-webhook-secret';

describe('bitbucket', () => {
  itVerifiesBodyHmac({
    provider: bitbucketProvider({ secrets: [SECRET] }),
    sign: signBitbucket,
    reference: {
      vector: {
        payload: 'Hello World!',
        secret: "It's a Secret to Everybody",
        signature: 'sha256=a4771c39fbe90f317c7824e83ddef3caae9cb3d976c214ace1f2937e133263c9',
      },
    },
    secret: SECRET,
    body: JSON.stringify({
      push: { changes: [] },
      repository: { full_name: 'acme/api', uuid: '{0f9d0d5a}' },
    }),
    signatureHeader: 'x-hub-signature',
    headers: (signature) => ({
      'X-Hub-Signature': signature,
      'X-Request-UUID': '2e2b1c3a-6f47-4b3e-8b8e-1d2f3a4b5c6d',
      'X-Event-Key': 'repo:push',
      'X-Hook-UUID': 'a1b2c3d4-0000-4000-8000-000000000001',
      'X-Attempt-Number': '1',
    }),
    event: {
      eventId: '2e2b1c3a-6f47-4b3e-8b8e-1d2f3a4b5c6d',
      type: 'repo:push',
      headers: {
        'x-event-key': 'repo:push',
        'x-hook-uuid': 'a1b2c3d4-0000-4000-8000-000000000001',
        'x-attempt-number': '1',
      },
    },
    keyless: { header: 'x-request-uuid' },
  });
});
