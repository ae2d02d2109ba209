import { randomUUID } from 'node:crypto';
import { signBasicAuth } from '@webhook-inbox/providers';
import { describe, expect, it } from 'vitest';
import { SOURCE_GUESS_LIMIT } from '../src/ingress/guess-limit.ts';
import { configIssues, sql } from './helpers.ts';
import { SECRETS, useSourcesReceiver, writeSourcesFile } from './sources-fixture.ts';
import { post } from '@webhook-inbox/scenarios/receiver';

// The sources that compare a presented secret as it is (api-key, basic-auth): each wrong one is a guess, so a
// client's guesses per source are bounded (429 too_many_attempts with Retry-After, right secret or wrong), and a
// secret shorter than 16 characters is refused at start-up. Over real HTTP, from one client (loopback).

const sources = useSourcesReceiver();
const { maxFailures } = SOURCE_GUESS_LIMIT;

/** A POST of a fresh event to `path` with `headers`: its status, error code, Retry-After, and the event's key. */
async function send(path: string, headers: Record<string, string>) {
  const id = randomUUID();
  const body = JSON.stringify({ account: 'acct_1', id, type: 'form.submitted' });
  const answer = await post(sources.receiver.url, {
    provider: '',
    key: id,
    path,
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const code =
    answer.status === 200 ? undefined : (JSON.parse(answer.body) as { error: { code: string } }).error.code;
  return { status: answer.status, code, retryAfter: answer.headers['retry-after'], id };
}

async function recorded(provider: string, id: string): Promise<number> {
  const { rows } = await sql(
    sources.db.url,
    `select count(*)::int as n from webhook_events where provider = $1 and event_id like '%' || $2`,
    [provider, id],
  );
  return (rows[0] as { n: number }).n;
}

describe('guesses of a presented secret', () => {
  it(`refused (accepted before): after ${maxFailures} wrong keys, the right key too is 429 too_many_attempts with Retry-After, nothing recorded; another source is not affected`, async () => {
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    for (let i = 0; i < maxFailures; i += 1) {
      expect((await send('/webhooks/apikey', bearer(`wrong-key-${i}-0123456789`))).code).toBe(
        'invalid_signature',
      );
    }
    const right = await send('/webhooks/apikey', bearer(SECRETS.apikey[0]));
    expect({ status: right.status, code: right.code }).toEqual({ status: 429, code: 'too_many_attempts' });
    expect(Number(right.retryAfter)).toBeGreaterThan(0);
    expect(Number(right.retryAfter)).toBeLessThanOrEqual(SOURCE_GUESS_LIMIT.windowSeconds);
    expect(await recorded('apikey', right.id)).toBe(0);
    const wrong = await send('/webhooks/apikey', bearer('wrong-key-again-0123456789'));
    expect(wrong.status).toBe(429);
    // Counted per source: the basic-auth source still answers this client.
    const basic = await send('/webhooks/basic', signBasicAuth(SECRETS.basic[0]));
    expect(basic.status).toBe(200);
    expect(await recorded('basic', basic.id)).toBe(1);
  });

  it('counts wrong Basic credentials, never right ones or absent ones', async () => {
    for (let i = 0; i < 3 * maxFailures; i += 1) {
      expect((await send('/webhooks/basic', signBasicAuth(SECRETS.basic[1]))).status).toBe(200);
      expect((await send('/webhooks/basic', {})).code).toBe('missing_signature');
    }
    for (let i = 0; i < maxFailures; i += 1) {
      expect((await send('/webhooks/basic', signBasicAuth(`hooks:wrong-password-${i}-0123`))).status).toBe(
        400,
      );
    }
    expect((await send('/webhooks/basic', signBasicAuth(SECRETS.basic[0]))).code).toBe('too_many_attempts');
  });
});

describe('the length of a presented secret', () => {
  it('refused at start-up (accepted before): an api-key key or a basic-auth password under 16 characters, naming the source', () => {
    const file = writeSourcesFile(`
sources:
  forms:
    type: api-key
    secrets: [a-long-enough-key-0123, short-key]
    apiKey: { header: X-Key }
    eventKey: { pointer: /id }
    eventType: { constant: form }
`);
    const issues = configIssues(sources.db.url, { WEBHOOK_SOURCES_FILE: file }).join('\n');
    expect(issues).toMatch(/source "forms": secret #2's key is shorter than 16 characters/);
    expect(issues).not.toContain('short-key');
    const basic = writeSourcesFile(
      'sources:\n  adyen:\n    type: basic-auth\n    secrets: ["adyen:short-password"]\n    eventKey: { pointer: /id }\n    eventType: { constant: n }\n',
    );
    const basicIssues = configIssues(sources.db.url, { WEBHOOK_SOURCES_FILE: basic }).join('\n');
    expect(basicIssues).toMatch(/source "adyen": secret #1's password is shorter than 16 characters/);
    expect(basicIssues).not.toContain('short-password');
  });
});
