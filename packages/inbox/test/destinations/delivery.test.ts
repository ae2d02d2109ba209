/**
 * Destinations end to end in one process: the worker fans each event out to the destinations it matches, and each
 * destination's queue delivers it over real loopback HTTP, signed (every delivery verified by the official
 * `standardwebhooks` npm package), recorded per attempt, retried, never sent again after a 2xx was recorded.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  onPath,
  requireTool,
  startWebhookSink,
  useTestDatabase,
  waitFor,
  type Responder,
  type Sink,
  type SinkRequest,
} from '@webhook-inbox/testing';
import { replayEvent } from '@webhook-inbox/operator';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { useWorkerHarness } from '../support/harness.ts';
import { createInbox } from '../../src/inbox.ts';
import {
  createDestinations,
  destinationQueue,
  parseDestinations,
  type Destinations,
} from '../../src/destinations/index.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const started: Array<Destinations | Sink> = [];
afterEach(async () => {
  for (const item of started.splice(0).reverse()) {
    if ('url' in item) await item.close();
    else await item.stop({ timeoutMs: 5_000 });
  }
});

async function sink(responder?: Responder): Promise<Sink> {
  const s = await startWebhookSink(responder);
  started.push(s);
  return s;
}

/** `yaml`'s destinations on the harness's pool, stopped after the test. */
function destinationsOf(yaml: string): Destinations {
  const destinations = createDestinations({
    connectionString: db.url,
    pool: harness.pool,
    destinations: parseDestinations(yaml, 'destinations.yaml'),
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  started.push(destinations);
  return destinations;
}

/** A worker with `yaml`'s destinations, delivering. */
async function startWith(yaml: string): Promise<Destinations> {
  const destinations = destinationsOf(yaml);
  const inbox = createInbox();
  destinations.register(inbox);
  await destinations.start();
  await harness.start(inbox);
  await destinations.work();
  return destinations;
}

function verified(request: SinkRequest, whsec: string): unknown {
  return new Webhook(whsec).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

/** A delivery's requests, as recorded (the fan-out's own attempt, which sent nothing, is left out). */
async function attempts(eventId: string, effect: string) {
  const { rows } = await harness.pool.query<{
    outcome: string;
    error: string | null;
    response_status: number | null;
    response_excerpt: string | null;
  }>(
    `select outcome, error, response_status, response_excerpt from effect_attempts
      where event_id = $1 and effect = $2 and (response_status is not null or error is not null)
      order by attempt`,
    [eventId, effect],
  );
  return rows;
}

describe('destinations', () => {
  it('delivers each matching event once, signed by both live secrets, and records the attempt', async () => {
    const [current, previous] = [secret(), secret()];
    const billing = await sink(() => ({ status: 200, body: 'thanks' }));
    const everything = await sink();
    await startWith(`
destinations:
  billing:
    url: ${billing.url}
    allowPrivateNetwork: true
    events: [{ source: shop, types: ['invoice.*'] }]
    filter: { pointer: /live, equals: true }
    secrets: [${current}, ${previous}]
  everything:
    url: ${everything.url}
    allowPrivateNetwork: true
    body: raw
    events: [{ source: '*' }]
    headers: { X-Team: audit }
    secrets: [${current}]
`);
    const sent = [
      { eventId: 'e1', type: 'invoice.paid', payload: { live: true, n: 1 } },
      { eventId: 'e2', type: 'invoice.paid', payload: { live: false, n: 2 } },
      { eventId: 'e3', type: 'order.created', payload: { live: true, n: 3 } },
      {
        eventId: 'e4',
        type: 'invoice.voided',
        payload: { live: true },
        payloadText: '{"live": true, "big": 12345678901234567890}',
      },
    ];
    for (const event of sent) await harness.producer.send({ provider: 'shop', ...event });
    await waitFor(() => billing.requests.length >= 2 && everything.requests.length >= 4, {
      timeout: 30_000,
      message: 'deliveries',
    });

    // Both secrets sign: a receiver holding either verifies (rotation).
    for (const request of billing.requests) {
      expect(verified(request, current)).toBeTruthy();
      expect(verified(request, previous)).toBeTruthy();
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    }
    const envelopes = billing.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(envelopes.map((e) => e.key).sort()).toEqual(['e1', 'e4']);
    expect(envelopes[0]).toMatchObject({ provider: 'shop', payload: { live: true } });
    expect(envelopes[0]?.id).toBe(billing.requests[0]?.headers['webhook-id']);
    // Raw: the body as recorded, integers past 2^53 with every digit.
    for (const request of everything.requests) expect(verified(request, current)).toBeTruthy();
    expect(everything.requests.map((r) => r.headers['x-team'])).toEqual(Array(4).fill('audit'));
    expect(everything.requests.some((r) => r.body.includes('12345678901234567890'))).toBe(true);

    await waitFor(async () => (await attempts('e1', 'destination.billing')).length === 1, {
      timeout: 10_000,
      message: 'the attempt recorded',
    });
    expect(await attempts('e1', 'destination.billing')).toEqual([
      { outcome: 'completed', error: null, response_status: 200, response_excerpt: 'thanks' },
    ]);
  });

  it('retries on the schedule, honours Retry-After, and never sends again after a 2xx; a forced replay sends again', async () => {
    const whsec = secret();
    const target = await sink((_, index) =>
      index === 0
        ? { status: 503, body: 'x'.repeat(5000) }
        : index === 1
          ? { status: 429, headers: { 'Retry-After': '1' }, body: 'slow down' }
          : { status: 204 },
    );
    const destinations = await startWith(`
destinations:
  flaky:
    url: ${target.url}
    allowPrivateNetwork: true
    events: [{ source: shop }]
    retrySchedule: [0, 0, 0, 0]
    secrets: [${whsec}]
`);
    await harness.producer.send({ provider: 'shop', eventId: 'r1', type: 'a', payload: { a: 1 } });
    await waitFor(async () => (await attempts('r1', 'destination.flaky')).length === 3, {
      timeout: 30_000,
      message: 'three attempts',
    });
    const rows = await attempts('r1', 'destination.flaky');
    expect(rows.map((r) => [r.outcome, r.response_status, r.error])).toEqual([
      ['failed', 503, 'HTTP 503'],
      ['failed', 429, 'HTTP 429'],
      ['completed', 204, null],
    ]);
    expect(rows[0]?.response_excerpt).toHaveLength(1024);
    // The 429's retry was due no sooner than its Retry-After (the schedule said at once).
    const { rows: jobs } = await harness.pool.query<{ delay: number }>(
      `select extract(epoch from start_after - created_on)::float8 as delay from pgboss.job
        where name = $1 and (data->>'attempt')::int = 3`,
      [destinationQueue('flaky')],
    );
    expect(jobs[0]?.delay).toBeGreaterThanOrEqual(0.99);
    // Every request carried the same webhook-id: the stable key.
    expect(new Set(target.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);

    // A second delivery job for the delivered event (a retried job, a redelivery) sends nothing.
    const { rows: before } = await harness.pool.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`,
      [destinationQueue('flaky')],
    );
    await harness.producer.boss.send(destinationQueue('flaky'), {
      provider: 'shop',
      eventId: 'r1',
      attempt: 1,
    });
    await waitFor(
      async () =>
        (
          await harness.pool.query<{ n: number }>(
            `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`,
            [destinationQueue('flaky')],
          )
        ).rows[0]!.n > before[0]!.n,
      { timeout: 20_000, message: 'the extra job done' },
    );
    expect(target.requests).toHaveLength(3);

    // The existing replay path, forcing this destination's effect: delivered again, with the same id.
    await replayEvent(
      { pool: harness.pool, boss: harness.producer.boss, effectsFor: () => ['destination.flaky'] },
      'shop',
      'r1',
      { forceEffect: 'destination.flaky' },
    );
    await waitFor(() => target.requests.length === 4, { timeout: 30_000, message: 'the replay delivered' });
    expect(target.requests[3]?.headers['webhook-id']).toBe(target.requests[0]?.headers['webhook-id']);
    void destinations;
  });

  it('pauses a destination that answers 410 Gone, and opens the circuit after failures in a row', async () => {
    const gone = await sink(() => ({ status: 410 }));
    const down = await sink(() => ({ status: 500 }));
    await startWith(`
destinations:
  gone:
    url: ${gone.url}
    allowPrivateNetwork: true
    events: [{ source: shop }]
    secrets: [${secret()}]
  down:
    url: ${down.url}
    allowPrivateNetwork: true
    events: [{ source: shop }]
    retrySchedule: [0, 0, 0]
    breaker: { failures: 2, probeAfter: 1h }
    secrets: [${secret()}]
`);
    await harness.producer.send({ provider: 'shop', eventId: 'p1', type: 'a', payload: {} });
    const state = async (name: string) =>
      (
        await harness.pool.query<{ state: string; reason: string | null }>(
          'select state, reason from destination_states where name = $1',
          [name],
        )
      ).rows[0];
    await waitFor(async () => (await state('gone'))?.state === 'paused', {
      timeout: 30_000,
      message: 'paused',
    });
    expect((await state('gone'))?.reason).toMatch(/^410 Gone from http:\/\/127\.0\.0\.1:/);
    await waitFor(async () => (await state('down'))?.state === 'open', { timeout: 30_000, message: 'open' });
    expect((await state('down'))?.reason).toMatch(/^2 failures in a row, the last: HTTP 500/);
    // Open: the third scheduled attempt waits for the probe, an hour away.
    await harness.producer.send({ provider: 'shop', eventId: 'p2', type: 'a', payload: {} });
    await waitFor(
      async () =>
        (
          await harness.pool.query(
            `select 1 from pgboss.job where name = $1 and start_after > now() + interval '50 minutes'`,
            [destinationQueue('down')],
          )
        ).rowCount! > 0,
      { timeout: 30_000, message: 'deliveries wait for the probe' },
    );
    expect(down.requests).toHaveLength(2);
    expect(gone.requests).toHaveLength(1);
  });

  it("leaves a closed destination's backlog in its queue until the probe, then delivers every event once", async () => {
    // Fails its first request only, which opens the circuit: the probe, 3 s on, succeeds.
    let failures = 1;
    const delivered: unknown[] = [];
    const closed = await sink((request) => {
      if (failures-- > 0) return { status: 500 };
      delivered.push(request.headers['webhook-id']);
      return { status: 204 };
    });
    await startWith(`
destinations:
  closed:
    url: ${closed.url}
    allowPrivateNetwork: true
    concurrency: 2
    events: [{ source: shop }]
    retrySchedule: [0, 0, 0, 0, 0, 0, 0, 0]
    breaker: { failures: 1, probeAfter: 3 }
    secrets: [${secret()}]
`);
    const queue = destinationQueue('closed');
    const jobs = async (where: string) =>
      Number(
        (
          await harness.pool.query<{ n: string }>(
            `select count(*) as n from pgboss.job where name = $1 and ${where}`,
            [queue],
          )
        ).rows[0]!.n,
      );
    await harness.producer.send({ provider: 'shop', eventId: 'c0', type: 'a', payload: {} });
    await waitFor(
      async () =>
        (
          await harness.pool.query(
            `select 1 from destination_states where name = 'closed' and state = 'open'`,
          )
        ).rowCount === 1,
      { timeout: 30_000, message: 'the circuit open after the first failure' },
    );
    // The next 20 deliveries are sent while it is open, until the probe 3 s on.
    for (let i = 1; i <= 20; i++) {
      await harness.producer.send({ provider: 'shop', eventId: `c${i}`, type: 'a', payload: {} });
    }
    await waitFor(() => new Set(delivered).size === 21, {
      timeout: 60_000,
      message: 'every event delivered after the probe',
    });
    // Every job done (the last 2xx recorded, nothing put back still waiting), so nothing is left to send.
    await waitFor(async () => (await jobs(`state not in ('completed', 'failed', 'cancelled')`)) === 0, {
      timeout: 30_000,
      message: 'every delivery job done',
    });
    // Put back: the deliveries fetched with the one that found the circuit open (2 slots × 2 per fetch), while it
    // was open and while the probe was in flight, not each of the 20.
    const putBack = (await jobs(`data->>'eventId' <> 'c0' and state = 'completed'`)) - 20;
    expect(putBack, `${putBack} put back`).toBeLessThanOrEqual(12);
    // Sent once each: 21 deliveries answered 2xx, one failed request before them.
    expect(delivered).toHaveLength(21);
    expect(closed.requests).toHaveLength(22);
  });

  it('never lets a slow destination delay another: the healthy one gets every event while the slow one holds its slot', async () => {
    const release: Array<() => void> = [];
    const slow = await sink(() => new Promise((resolve) => release.push(() => resolve({ status: 200 }))));
    const healthy = await sink();
    await startWith(`
destinations:
  slow:
    url: ${slow.url}
    allowPrivateNetwork: true
    concurrency: 1
    timeout: 300
    events: [{ source: shop }]
    secrets: [${secret()}]
  healthy:
    url: ${healthy.url}
    allowPrivateNetwork: true
    concurrency: 4
    events: [{ source: shop }]
    secrets: [${secret()}]
`);
    const n = 30;
    for (let i = 0; i < n; i++) {
      await harness.producer.send({ provider: 'shop', eventId: `h${i}`, type: 'a', payload: { i } });
    }
    await waitFor(() => healthy.requests.length === n, { timeout: 60_000, message: 'healthy got all' });
    // The slow one has answered nothing yet: it holds its one slot, and only that.
    expect(slow.requests).toHaveLength(1);
    expect(slow.inFlight()).toBe(1);
    while (slow.requests.length < n) {
      const before = slow.requests.length;
      release.splice(0).forEach((resolve) => resolve());
      await waitFor(() => slow.requests.length > before || slow.requests.length === n, {
        timeout: 30_000,
        message: 'the slow one moves on',
      });
    }
    release.splice(0).forEach((resolve) => resolve());
    expect(new Set(slow.requests.map((r) => r.headers['webhook-id'])).size).toBe(n);
  });

  it('a delivery waiting for a slot holds its key, gives it back when its worker stops, and is delivered once after', async () => {
    const api = await sink();
    const yaml = `
destinations:
  narrow:
    url: ${api.url}
    allowPrivateNetwork: true
    concurrency: 1
    events: [{ source: shop }]
    secrets: [${secret()}]
`;
    const first = await startWith(yaml);
    // The one slot held by a worker that died mid-request: its lease has most of an hour to run.
    await harness.pool.query(
      `update destination_slots set held_until = now() + interval '1 hour', token = gen_random_uuid()
        where destination = 'narrow'`,
    );
    await harness.producer.send({ provider: 'shop', eventId: 'w1', type: 'a', payload: {} });
    const key = async () =>
      (
        await harness.pool.query<{ status: string; held: boolean }>(
          `select status, claim_expires_at > now() as held from idempotency_keys where effect = 'destination.narrow'`,
        )
      ).rows[0];
    await waitFor(async () => (await key())?.held === true, {
      timeout: 20_000,
      message: 'the delivery claimed its key and waits for the slot',
    });

    started.splice(started.indexOf(first), 1);
    await first.stop({ timeoutMs: 5_000 });
    expect(api.requests).toHaveLength(0);
    // Given back, not left held for its lease: the delivery's next job claims it at once.
    expect(await key()).toEqual({ status: 'claimed', held: null });
    const { rows: waiting } = await harness.pool.query<{ data: { eventId: string; attempt: number } }>(
      `select data from pgboss.job where name = $1 and state = 'created'`,
      [destinationQueue('narrow')],
    );
    expect(waiting.map((job) => job.data)).toEqual([{ provider: 'shop', eventId: 'w1', attempt: 1 }]);

    await harness.pool.query(
      `update destination_slots set held_until = '-infinity' where destination = 'narrow'`,
    );
    // Another worker, delivering only (the event's fan-out is done).
    const second = destinationsOf(yaml);
    await second.start();
    await second.work();
    await waitFor(async () => (await key())?.status === 'completed', {
      timeout: 20_000,
      message: 'delivered',
    });
    expect(api.requests.map((r) => r.headers['webhook-id'])).toHaveLength(1);
  });

  it('refuses loopback addresses unless the destination allows private networks, by literal and by name', async () => {
    const target = await sink();
    const port = new URL(target.url).port;
    await startWith(`
destinations:
  literal:
    url: http://127.0.0.1:${port}/hooks
    events: [{ source: shop }]
    retrySchedule: [0]
    secrets: [${secret()}]
  named:
    url: http://localhost:${port}/hooks
    events: [{ source: shop }]
    retrySchedule: [0]
    secrets: [${secret()}]
`);
    await harness.producer.send({ provider: 'shop', eventId: 'x1', type: 'a', payload: {} });
    for (const name of ['literal', 'named']) {
      await waitFor(async () => (await attempts('x1', `destination.${name}`)).length === 1, {
        timeout: 30_000,
        message: `${name} attempted`,
      });
      const [row] = await attempts('x1', `destination.${name}`);
      expect(row?.outcome).toBe('dead');
      expect(row?.error).toMatch(/(127\.0\.0\.1|::1), a private, loopback or link-local address: refused/);
    }
    expect(target.requests).toHaveLength(0);
  });
});

const pythonVerifier = `
import json, sys
from standardwebhooks.webhooks import Webhook
cases = json.load(sys.stdin)
for case in cases:
    Webhook(case["secret"]).verify(case["body"], case["headers"])
print(len(cases))
`;

/** The official Python library, vendored unchanged (test/vendor/python/README.md): PyPI is out of CI's reach. */
const pythonPath = fileURLToPath(new URL('../../../../test/vendor/python', import.meta.url));
const verifyInPython = (cases: unknown) =>
  spawnSync('python3', ['-c', pythonVerifier], {
    input: JSON.stringify(cases),
    env: { ...process.env, PYTHONPATH: pythonPath },
  });

// Python is on every machine CI runs on; under CI=true a machine without it fails here rather than skip.
describe.runIf(requireTool('python3', onPath('python3'), 'apt-get install python3'))(
  'destinations, verified by the official Standard Webhooks Python library',
  () => {
    it('verifies every delivery', async () => {
      const whsec = secret();
      const target = await sink();
      await startWith(`
destinations:
  python:
    url: ${target.url}
    allowPrivateNetwork: true
    events: [{ source: shop }]
    secrets: [${whsec}, ${secret()}]
`);
      for (let i = 0; i < 10; i++) {
        await harness.producer.send({
          provider: 'shop',
          eventId: `py${i}`,
          type: 't',
          payload: { i, s: 'é' },
        });
      }
      await waitFor(() => target.requests.length === 10, { timeout: 30_000, message: 'delivered' });
      const cases = target.requests.map((r) => ({
        secret: whsec,
        body: r.body,
        headers: {
          'webhook-id': r.headers['webhook-id'],
          'webhook-timestamp': r.headers['webhook-timestamp'],
          'webhook-signature': r.headers['webhook-signature'],
        },
      }));
      const result = verifyInPython(cases);
      expect(result.stderr.toString()).toBe('');
      expect(result.stdout.toString().trim()).toBe('10');
      // The same verifier refuses a body changed by one character.
      const tampered = verifyInPython([{ ...cases[0], body: `${cases[0]!.body} ` }]);
      expect(tampered.status).not.toBe(0);
      expect(tampered.stderr.toString()).toMatch(/WebhookVerificationError/);
    });
  },
);
