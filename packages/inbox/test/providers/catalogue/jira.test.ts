import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jiraProvider, signJira } from '../../../src/providers/catalogue/jira.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Atlassian publishes no verification library or test vector for Jira; the reference is its documented recipe:
// https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks
const SECRET = 'jira-admin-webhook-secret';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  timestamp: 1733356800000,
  webhookEvent: 'jira:issue_created',
  issue_event_type_name: 'issue_created',
  issue: { id: '10001', key: 'OPS-1' },
});
const JIRA = jiraProvider({ secrets: [SECRET] });
const sign = (payload: string, secret: string) => signJira({ payload, secret });
const headers = (signature: string): Record<string, string> => ({
  'X-Hub-Signature': signature,
  'X-Atlassian-Webhook-Identifier': '1733356800000-10001',
  'X-Atlassian-Webhook-Flow': 'Primary',
});

describe('jira', () => {
  it('signs as Atlassian documents it: sha256= and the hex HMAC-SHA256 of the body', () => {
    const expected = `sha256=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`;
    expect(sign(BODY, SECRET)).toBe(expected);
  });

  itVerifiesBodyHmac({
    provider: JIRA,
    secret: SECRET,
    body: BODY,
    signatureHeader: 'x-hub-signature',
    sign,
    headers,
    now: NOW,
    event: {
      eventId: '1733356800000-10001',
      type: 'jira:issue_created',
      headers: { 'x-atlassian-webhook-flow': 'Primary' },
    },
    keyless: { header: 'x-atlassian-webhook-identifier' },
  });
});
