import { ingest } from '@webhook-inbox/inbox';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startStack, type Client, type Stack } from './support.ts';

const db = useTestDatabase();
let stack: Stack;
let client: Client;

/** The event page's facts list: its `<dt>`/`<dd>` pairs, in order. */
function facts(page: string): Array<[string, string]> {
  const list = /<dl class="facts" id="event-facts"[^>]*>([\s\S]*?)<\/dl>/.exec(page)?.[1] ?? '';
  return [...list.matchAll(/<dt>([^<]*)<\/dt>\s*<dd[^>]*>([\s\S]*?)<\/dd>/g)].map((m) => [
    m[1] ?? '',
    (m[2] ?? '').replace(/<[^>]+>/g, '').trim(),
  ]);
}

beforeAll(async () => {
  stack = await startStack(db.url);
  const deps = { pool: stack.pool, boss: stack.boss };
  await ingest(deps, {
    provider: 'github',
    eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    type: 'pull_request.opened',
    payloadText: JSON.stringify({
      action: 'opened',
      pull_request: { number: 42, title: 'Fix the parser' },
      repository: { full_name: 'acme/api' },
      sender: { login: 'octocat' },
    }),
    headers: { 'x-github-event': 'pull_request', 'x-github-hook-installation-target-type': 'repository' },
  });
  await ingest(deps, {
    provider: 'twilio',
    eventId: 'idem-token-1',
    type: 'sms',
    payloadText: JSON.stringify({
      form: { AccountSid: 'AC0123', From: '+14155550100', To: '+14155550199', Body: 'hi' },
      raw: 'Body=hi',
    }),
    headers: {},
  });
  client = await login(stack.url);
});
afterAll(async () => {
  await stack?.stop();
});

describe('event page: the provider’s facts', () => {
  it('a GitHub event: its repository and hook target, and who sent it', async () => {
    const page = await (
      await client.get('/event?provider=github&id=72d3162e-cc78-11e3-81ab-4c9367dc0958')
    ).text();
    expect(facts(page).slice(0, 4)).toEqual([
      ['Type', 'pull_request.opened'],
      ['Repository', 'acme/api'],
      ['Hook target', 'repository'],
      ['Sender', 'octocat'],
    ]);
  });

  it('a Twilio message: its account and both phone numbers', async () => {
    const page = await (await client.get('/event?provider=twilio&id=idem-token-1')).text();
    expect(facts(page).slice(0, 4)).toEqual([
      ['Type', 'sms'],
      ['Account', 'AC0123'],
      ['To', '+14155550199'],
      ['From', '+14155550100'],
    ]);
  });

  it('a provider without facts shows the event’s own rows only', async () => {
    await stack.send('evt_facts', JSON.stringify({ id: 'evt_facts', data: { object: {} } }));
    const page = await (await client.get('/event?provider=stripe&id=evt_facts')).text();
    expect(facts(page).map(([label]) => label)).toEqual([
      'Type',
      'Status',
      'Received',
      'Processed',
      'Attempts',
    ]);
  });
});
