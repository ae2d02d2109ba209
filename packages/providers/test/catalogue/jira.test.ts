import { describe } from 'vitest';
import { jiraProvider, signJira } from '../../src/catalogue/providers/jira.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Atlassian publishes no verification library or test vector for Jira; the reference is its documented recipe:
// https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks
const SECRET = 'jira-admin-webhook-secret';

describe('jira', () => {
  itVerifiesBodyHmac({
    provider: jiraProvider({ secrets: [SECRET] }),
    sign: signJira,
    reference: { by: 'Atlassian', digest: 'sha256', encoding: 'hex', prefix: 'sha256=' },
    secret: SECRET,
    body: JSON.stringify({
      timestamp: 1733356800000,
      webhookEvent: 'jira:issue_created',
      issue_event_type_name: 'issue_created',
      issue: { id: '10001', key: 'OPS-1' },
    }),
    signatureHeader: 'x-hub-signature',
    headers: (signature) => ({
      'X-Hub-Signature': signature,
      'X-Atlassian-Webhook-Identifier': '1733356800000-10001',
      'X-Atlassian-Webhook-Flow': 'Primary',
    }),
    event: {
      eventId: '1733356800000-10001',
      type: 'jira:issue_created',
      headers: { 'x-atlassian-webhook-flow': 'Primary' },
    },
    keyless: { header: 'x-atlassian-webhook-identifier' },
  });
});
