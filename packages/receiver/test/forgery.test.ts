import { randomUUID } from 'node:crypto';
import { signHmac } from '@webhook-inbox/providers';
import { describe, expect, it } from 'vitest';
import { sql } from './helpers.ts';
import { codeOf, META_VERIFY_TOKEN, request, SECRETS, useSourcesReceiver } from './sources-fixture.ts';
import { post } from '@webhook-inbox/scenarios/receiver';

// What an attacker without the secret can do with what the receiver answers and what it was once sent, over real
// HTTP against a receiver on a real PostgreSQL: ask an unsigned handshake for the answer to a body it chose and post
// that body with the answer as its signature; post a captured signed delivery again under a new unsigned delivery
// id. Neither may record anything new.

const sources = useSourcesReceiver();

async function rowsOf(provider: string): Promise<number> {
  const result = await sql(
    sources.db.url,
    'select count(*)::int as n from webhook_events where provider = $1',
    [provider],
  );
  return (result.rows[0] as { n: number }).n;
}

describe('X CRC is not a signing oracle', () => {
  // Each is a body the x source would record (JSON, keyed by its hash) if it were signed.
  const forgedBodies = ['{"for_user_id":"1","tweet_create_events":[{"id":"9"}]}', '[]', '123', 'true', ' {}'];

  it.each(forgedBodies)(
    'refused: the CRC of the JSON body %j, then that body posted with it as signature (was recorded before)',
    async (body) => {
      const before = await rowsOf('x');
      const crc = await request(sources.receiver.url, `/webhooks/x?crc_token=${encodeURIComponent(body)}`, {
        method: 'GET',
      });
      // Had it answered, this is the forgery: the response token is X's signature header of that body.
      const token =
        crc.status === 200 ? (JSON.parse(crc.body) as { response_token: string }).response_token : '';
      const forged = await request(sources.receiver.url, '/webhooks/x', {
        body,
        headers: { 'content-type': 'application/json', 'x-twitter-webhooks-signature': token },
      });
      expect(await rowsOf('x')).toBe(before);
      expect(forged.status).toBe(400);
      expect({ status: crc.status, code: codeOf(crc) }).toEqual({ status: 400, code: 'invalid_payload' });
    },
  );

  it('refused: a crc_token of characters X never sends, or longer than X sends', async () => {
    for (const token of ['a b c d e f', 'abc&def=ghi', 'x'.repeat(256), 'short']) {
      const answer = await request(
        sources.receiver.url,
        `/webhooks/x?crc_token=${encodeURIComponent(token)}`,
        {
          method: 'GET',
        },
      );
      expect({ token, status: answer.status, code: codeOf(answer) }).toEqual({
        token,
        status: 400,
        code: 'invalid_payload',
      });
    }
  });

  it("answers X's own kind of token (base64url, tens of characters)", async () => {
    const answer = await request(
      sources.receiver.url,
      '/webhooks/x?crc_token=NzM0YTJmZjAtOWI2Ny00YjE5LWE1Mjkt',
      {
        method: 'GET',
      },
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toHaveProperty('response_token');
  });
});

describe('a captured delivery posted again', () => {
  it('with a new unsigned X-GitHub-Delivery: a duplicate, one row (a new event before)', async () => {
    const body = JSON.stringify({ action: 'opened', pull_request: { id: randomUUID() } });
    const signature = signHmac({
      hmac: {
        header: 'X-Hub-Signature-256',
        algorithm: 'sha256',
        encoding: 'hex',
        prefix: 'sha256=',
        signed: '{body}',
      },
      secret: SECRETS.github[0],
      payload: body,
    });
    const deliver = (delivery: string) =>
      request(sources.receiver.url, '/webhooks/github', {
        body,
        headers: {
          'content-type': 'application/json',
          'x-github-delivery': delivery,
          'x-github-event': 'pull_request',
          ...signature,
        },
      });
    expect(JSON.parse((await deliver(randomUUID())).body)).toMatchObject({ status: 'accepted' });
    expect(JSON.parse((await deliver(randomUUID())).body)).toMatchObject({ status: 'duplicate' });
    const rows = await sql(
      sources.db.url,
      "select count(*)::int as n from webhook_events e join webhook_event_payloads p using (provider, event_id, received_at) where e.provider = 'github' and p.payload->'pull_request'->>'id' = $1",
      [(JSON.parse(body) as { pull_request: { id: string } }).pull_request.id],
    );
    expect(rows.rows).toEqual([{ n: 1 }]);
  });
});

describe('X-Content-Type-Options: nosniff on every answer', () => {
  // A handshake echoes text the request chose: a browser must never sniff it into HTML or script.
  it('handshake echoes, refusals, an accepted event, unknown routes, health, the management listener (absent before)', async () => {
    const answers: Array<[string, { method?: string; body?: string; headers?: Record<string, string> }]> = [
      [
        `/webhooks/meta?hub.mode=subscribe&hub.verify_token=${META_VERIFY_TOKEN}&hub.challenge=%3Cscript%3E`,
        { method: 'GET' },
      ],
      [`/webhooks/graph?key=${SECRETS.graph[0]}&validationToken=%3Chtml%3E`, { body: '' }],
      ['/webhooks/x?crc_token=NzM0YTJmZjAtOWI2Ny00YjE5LWE1Mjkt', { method: 'GET' }],
      ['/webhooks/x?crc_token=%7B%7D', { method: 'GET' }],
      ['/webhooks/github', { body: '{}' }],
      [
        `/webhooks/sendgrid?token=${SECRETS.sendgrid[0]}`,
        { body: JSON.stringify([{ sg_event_id: randomUUID(), event: 'open' }]) },
      ],
      ['/webhooks/nope', { body: '{}' }],
      ['/elsewhere', { method: 'GET' }],
      ['/healthz', { method: 'GET' }],
    ];
    const seen: Array<{ path: string; status: number; nosniff: unknown }> = [];
    for (const [path, options] of answers) {
      const delivery = {
        provider: '',
        key: '',
        path,
        body: options.body ?? '',
        headers: options.headers ?? {},
      };
      const answer = await post(sources.receiver.url, delivery, { method: options.method });
      seen.push({ path, status: answer.status, nosniff: answer.headers['x-content-type-options'] });
    }
    const metrics = await fetch(new URL('/metrics', sources.receiver.managementUrl));
    await metrics.arrayBuffer();
    seen.push({
      path: '/metrics',
      status: metrics.status,
      nosniff: metrics.headers.get('x-content-type-options'),
    });
    // Each kind of answer is there: two echoes and a CRC (200), refusals (400, 404), two recorded (200).
    expect(seen.map(({ status }) => status)).toEqual([200, 200, 200, 400, 400, 200, 404, 404, 200, 200]);
    expect(seen.filter(({ nosniff }) => nosniff !== 'nosniff')).toEqual([]);
  });
});
