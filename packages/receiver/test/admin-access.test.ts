import http from 'node:http';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_THROTTLE } from '../src/admin/access.ts';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { memoryLogger, sql } from './helpers.ts';
import { receiverEnv } from '@webhook-inbox/scenarios/receiver';

// Guessing the admin token over HTTP: the throttle counts and refuses in one statement per attempt, per client
// address (an IPv6 /64 and every loopback address count as one); forwarding headers count only from a trusted proxy;
// a flood of refusals is a few log lines.

const db = useTestDatabase();
const TOKEN = 'admin-access-test-token-0123456789';
const LIMIT = ADMIN_THROTTLE.maxFailures;

let receiver: Receiver | undefined;
let lines: () => string[] = () => [];
beforeEach(async () => {
  await sql(db.url, 'delete from auth_failures');
});
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function start(env: Record<string, string> = {}): Promise<Receiver> {
  const memory = memoryLogger('warn');
  lines = memory.lines;
  receiver = await startReceiver(
    parseConfig({ ...receiverEnv(db.url), PORT: '0', ADMIN_TOKEN: TOKEN, ...env }),
    {
      logger: memory.logger,
    },
  );
  return receiver;
}

interface Answer {
  status: number;
  code: string | undefined;
  retryAfter: string | undefined;
}

/** GET /admin/events on its own connection, with `token` and any other headers. */
function admin(base: string, token: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL('/admin/events?limit=1', base),
      { agent: false, headers: { authorization: `Bearer ${token}`, connection: 'close', ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: string } };
          const retryAfter = response.headers['retry-after'];
          resolve({ status: response.statusCode ?? 0, code: body.error?.code, retryAfter });
        });
      },
    );
    request.on('error', reject);
    request.end();
  });
}

const wrong = (i: number) => `wrong-admin-token-guess-${String(i).padStart(6, '0')}`;

function tally(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

function logged(): Record<string, unknown>[] {
  return lines().map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('guessing the admin token', () => {
  it(`200 concurrent wrong tokens from one address: ${LIMIT} are checked, the rest and then the right token are 429`, async () => {
    const { managementUrl } = await start();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => admin(managementUrl, wrong(i))));
    expect(tally(answers)).toEqual({ 401: LIMIT, 429: 200 - LIMIT });
    for (const answer of answers.filter((a) => a.status === 429)) {
      expect(answer.code).toBe('too_many_attempts');
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(ADMIN_THROTTLE.windowSeconds);
    }
    // Throttled, the right token gets the same answer: guesses past the limit teach nothing.
    expect(await admin(managementUrl, TOKEN)).toMatchObject({ status: 429, code: 'too_many_attempts' });
    // Forwarding headers from a peer that is not a trusted proxy change nothing.
    expect(await admin(managementUrl, TOKEN, { 'x-forwarded-for': '198.51.100.7' })).toMatchObject({
      status: 429,
    });
    const { rows } = await sql(db.url, 'select scope, client, failures from auth_failures');
    expect(rows).toEqual([{ scope: 'admin_api', client: 'loopback', failures: LIMIT + 1 }]);
  });

  it('a right token is never counted: a script that uses it keeps working', async () => {
    const { managementUrl } = await start();
    for (let i = 0; i < LIMIT + 5; i++) expect((await admin(managementUrl, TOKEN)).status).toBe(200);
    expect((await admin(managementUrl, wrong(1))).status).toBe(401);
  });

  it('300 refused requests are a few log lines, each kind logged once with the rest counted', async () => {
    const { managementUrl } = await start();
    for (let i = 0; i < 300; i++) await admin(managementUrl, wrong(i));
    const refused = logged().filter((line) => line.msg === 'admin request refused');
    expect(refused.map((line) => line.code)).toEqual(['unauthorized', 'too_many_attempts']);
    expect(refused[0]).toMatchObject({ status: 401, client: '127.0.0.1' });
    // The counts of the rest come at the end of the window, or at shutdown.
    await receiver!.close();
    const suppressed = logged().filter((line) => line.msg === 'similar log lines suppressed');
    expect(suppressed.reduce((sum, line) => sum + (line.suppressed as number), 0)).toBe(298);
    expect(logged().length).toBeLessThan(10);
  });
});

describe('behind a trusted proxy (TRUSTED_PROXIES)', () => {
  it("throttles the forwarded client's address: an IPv6 /64 as one, loopback addresses as one", async () => {
    const { managementUrl } = await start({ TRUSTED_PROXIES: '127.0.0.1' });
    const from = (address: string, i: number) =>
      admin(managementUrl, wrong(i), { 'x-forwarded-for': address });

    // A client that picks a new address in its /64 for every guess is still one client.
    for (let i = 0; i < LIMIT; i++) expect((await from(`2001:db8:1:2::${i + 1}`, i)).status).toBe(401);
    expect((await from('2001:db8:1:2:ffff::9', 99)).status).toBe(429);
    // Another /64 is another client; so is an IPv4 address.
    expect((await from('2001:db8:1:3::1', 100)).status).toBe(401);
    expect((await from('198.51.100.7', 101)).status).toBe(401);

    // Loopback addresses (127.0.0.0/8, ::1) are one client.
    for (let i = 0; i < LIMIT; i++) expect((await from(`127.0.0.${i + 2}`, i)).status).toBe(401);
    expect((await from('::1', 200)).status).toBe(429);

    // A client cannot prepend its way out: the first untrusted address from the right is the client.
    expect((await from('203.0.113.1, 2001:db8:1:2::77', 300)).status).toBe(429);

    const refused = logged().filter((line) => line.msg === 'admin request refused');
    expect(refused[0]).toMatchObject({ code: 'unauthorized', client: '2001:db8:1:2::1' });
    const { rows } = await sql(db.url, 'select client from auth_failures order by client');
    expect(rows.map((row: { client: string }) => row.client)).toEqual([
      '198.51.100.7',
      '2001:db8:1:2::/64',
      '2001:db8:1:3::/64',
      'loopback',
    ]);
  });
});
