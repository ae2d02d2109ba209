/**
 * The destinations' pages over real HTTP, fed by real deliveries: a worker of the billing group fans every stripe
 * event out (a `*` route) to two destinations on loopback endpoints, one answering 200, one 503; the list and the
 * page show their state and figures, the failures by cause, and pause and resume change the state, audited.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BREAK_GLASS_ACTOR,
  login,
  startBillingDestinations,
  startStack,
  type Client,
  type BillingDestinations,
  type Stack,
} from './support.ts';

const db = useTestDatabase();
let stack: Stack;
let client: Client;
let billing: BillingDestinations | undefined;
const servers: http.Server[] = [];

/** A loopback endpoint answering every request with `status` and `body`. */
async function endpoint(status: number, body: string): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume().on('end', () => res.writeHead(status).end(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const unescape = (text: string) =>
  text.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');

async function deliveries(effect: string): Promise<number> {
  const { rows } = await stack.pool.query<{ n: number }>(
    `select count(*)::int as n from effect_attempts where effect = $1 and response_status is not null`,
    [effect],
  );
  return rows[0]?.n ?? 0;
}

async function state(name: string): Promise<string | undefined> {
  const { rows } = await stack.pool.query<{ state: string }>(
    'select state from destination_states where name = $1',
    [name],
  );
  return rows[0]?.state;
}

beforeAll(async () => {
  stack = await startStack(db.url);
  const [ok, down] = [await endpoint(200, 'thanks'), await endpoint(503, 'down for maintenance')];
  billing = await startBillingDestinations(
    db.url,
    `destinations:
  ledger: { url: "${ok}", events: [{ source: stripe }], group: billing, secrets: [${whsec()}], allowPrivateNetwork: true }
  crm:
    url: "${down}"
    events: [{ source: stripe, types: ['checkout.*'] }]
    group: billing
    secrets: [${whsec()}]
    allowPrivateNetwork: true
    retrySchedule: [0, 1h]
    breaker: { failures: 100 }
`,
  );
  for (const id of ['evt_dest_1', 'evt_dest_2']) await stack.send(id, JSON.stringify({ id }));
  await waitFor(
    async () => (await deliveries('destination.ledger')) === 2 && (await deliveries('destination.crm')) === 2,
    { timeout: 60_000, message: 'both events delivered to both destinations' },
  );
  client = await login(stack.url);
}, 120_000);

afterAll(async () => {
  await billing?.stop();
  await stack?.stop();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

describe('destinations pages', () => {
  it('lists each destination with its group, state, success rate and backlog', async () => {
    const answer = await client.get('/destinations');
    expect(answer.status).toBe(200);
    const page = unescape(await answer.text());
    const row = (name: string) =>
      new RegExp(
        `<tr>\\s*<td><a href="/console/destinations/${name}">${name}</a></td>([\\s\\S]*?)</tr>`,
      ).exec(page)?.[1] ?? '';
    expect(row('ledger')).toContain('billing');
    expect(row('ledger')).toContain('100.0 %');
    expect(row('crm')).toContain('0.0 %');
    // crm's retries wait an hour: each event's next attempt is pending.
    expect(row('crm')).toMatch(/<td class="num">2<\/td>/);
  });

  it("shows a destination's failures grouped by cause and the answers on the event page", async () => {
    const page = unescape(await (await client.get('/destinations/crm')).text());
    expect(page).toContain('Destination crm');
    expect(page).toContain('Failures by cause');
    expect(page).toMatch(/<td class="error-text">HTTP <n><\/td>|<td class="error-text">HTTP 503<\/td>/);
    expect(page).toContain('Pause deliveries');

    const event = unescape(await (await client.get('/event?provider=stripe&id=evt_dest_1')).text());
    expect(event).toContain('HTTP 503');
    expect(event).toContain('down for maintenance');
    expect((await client.get('/destinations/nowhere')).status).toBe(404);
  });

  it('pauses and resumes a destination, with the CSRF token, audited with who and from where', async () => {
    expect((await client.post('/destinations/crm/pause', {})).status).toBe(403);
    expect(await state('crm')).toBe('active');

    const paused = await client.post('/destinations/crm/pause', { _csrf: client.csrf });
    expect(paused.status).toBe(303);
    expect(await state('crm')).toBe('paused');
    expect(unescape(await (await client.get('/destinations/crm')).text())).toContain(
      `paused by ${BREAK_GLASS_ACTOR}`,
    );

    const resumed = await client.post('/destinations/crm/resume', { _csrf: client.csrf });
    expect(resumed.status).toBe(303);
    expect(await state('crm')).toBe('active');

    const { rows } = await stack.pool.query<{ action: string; actor: string; remote_address: string }>(
      `select action, actor, remote_address from audit_log where target = 'crm' order by id`,
    );
    expect(rows).toEqual([
      {
        action: 'destination_paused',
        actor: BREAK_GLASS_ACTOR,
        remote_address: '127.0.0.1',
      },
      {
        action: 'destination_resumed',
        actor: BREAK_GLASS_ACTOR,
        remote_address: '127.0.0.1',
      },
    ]);
    expect((await client.post('/destinations/nowhere/pause', { _csrf: client.csrf })).status).toBe(404);
  });
});
