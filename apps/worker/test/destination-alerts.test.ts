/**
 * Destination alerts from a real worker, fed by real deliveries to a loopback endpoint: one destination answers
 * 503 (its circuit opens after 3 failures, its failure rate passes the threshold), one answers 410 Gone (paused),
 * one answers 200 until an operator pauses it. Each episode is one alert at a real sink, naming the destination, its
 * group and the cause, with the destination's console link, recorded in alerts_sent; a second worker's look sends
 * none again.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { Principal } from '@webhook-inbox/operator/access/roles';
import { setDestinationPaused } from '@webhook-inbox/operator/destinations';
import { startDestinationMonitor, type Alert } from '@webhook-inbox/operator/alerts';
import { checkoutEvent, queueEnv, startProducer } from '@webhook-inbox/scenarios/worker';
import {
  startAlertSink,
  useTempFiles,
  useTestDatabase,
  waitFor,
  type AlertSink,
} from '@webhook-inbox/testing';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type WorkerConfig } from '../src/env.ts';
import { startWorker, type Worker } from '../src/worker.ts';

const db = useTestDatabase();
const files = useTempFiles('destination-alerts-');
const CONSOLE = 'https://inbox.example.com/console';
let sink: AlertSink;
let endpoint: http.Server;
let pool: pg.Pool;
let worker: Worker;
let config: WorkerConfig;
let origin: string;
/** An operator at the CLI, as `webhook-inbox destinations pause` audits one. */
const ALICE: Principal = {
  actor: 'alice@laptop',
  role: 'operator',
  method: 'local_cli',
  groups: null,
  address: null,
};

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

/** The alert messages received whose text starts with `title`. */
function received(title: string): Array<{ text: string }> {
  return sink.bodies
    .map((body) => JSON.parse(body) as { text: string })
    .filter((message) => message.text.startsWith(`[webhook-inbox worker] ${title}`));
}

async function alerted(name: string): Promise<string[]> {
  const { rows } = await pool.query<{ alerted: string[] }>(
    'select alerted from destination_states where name = $1',
    [name],
  );
  return rows[0]?.alerted ?? [];
}

beforeAll(async () => {
  sink = await startAlertSink();
  // /flaky answers 503, /gone 410 Gone, anything else 200.
  endpoint = http.createServer((req, res) => {
    const status = req.url === '/flaky' ? 503 : req.url === '/gone' ? 410 : 200;
    req.resume().on('end', () => res.writeHead(status).end(status === 200 ? 'thanks' : 'no'));
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  const common = `events: [{ source: stripe }], secrets: [${whsec()}], allowPrivateNetwork: true`;
  const file = files.write(
    'destinations.yaml',
    `destinations:
  flaky: { url: "${origin}/flaky", ${common}, retrySchedule: [0, 1h], breaker: { failures: 3, probeAfter: 1h } }
  gone: { url: "${origin}/gone", ${common} }
  steady: { url: "${origin}/ok", ${common} }
`,
  );
  const parsed = parseConfig({
    DATABASE_URL: db.appUrl,
    WORKER_PORT: '0',
    MAIL_DIR: os.tmpdir(),
    LOG_LEVEL: 'silent',
    ALERT_WEBHOOK_URL: sink.url,
    CONSOLE_PUBLIC_URL: CONSOLE,
    WEBHOOK_DESTINATIONS_FILE: file,
    ALERT_DESTINATION_MIN_ATTEMPTS: '3',
    ...queueEnv(),
  });
  config = { ...parsed, destinationAlerts: { ...parsed.destinationAlerts, intervalMs: 200 } };
  pool = new pg.Pool({ connectionString: db.url, max: 3 });
  worker = await startWorker(config);
  const producer = await startProducer(pool, db.url);
  try {
    for (let i = 0; i < 4; i++) await producer.send(checkoutEvent());
  } finally {
    await producer.stop();
  }
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await pool?.end();
  await sink?.close();
  endpoint?.closeAllConnections();
  endpoint?.close();
});

describe('destination alerts', () => {
  it('alerts once when the circuit opens, naming the destination, its group, the cause and its page', async () => {
    const [message] = await waitFor(
      () => {
        const found = received("Destination's circuit open");
        return found.length > 0 ? found : undefined;
      },
      { timeout: 60_000, message: "the circuit's alert at the sink" },
    );
    expect(message?.text).toContain('flaky in group default: 3 failures in a row, the last: HTTP 503');
    expect(message?.text).toContain('destination: flaky');
    expect(message?.text).toContain('consumer group: default');
    expect(message?.text).toContain(`destination: ${CONSOLE}/destinations/flaky`);
    const rows = await waitFor(
      async () => {
        const { rows } = await pool.query(
          `select kind, provider, effect, outcome, service from alerts_sent where kind = 'destination_open'`,
        );
        return rows.length > 0 ? rows : undefined;
      },
      { message: 'the alert recorded in alerts_sent' },
    );
    expect(rows).toEqual([
      {
        kind: 'destination_open',
        provider: '*',
        effect: 'destination.flaky',
        outcome: 'sent',
        service: 'webhook-inbox worker',
      },
    ]);
  });

  it('alerts once when the failure rate reaches the threshold, with its figures and most frequent error', async () => {
    const [message] = await waitFor(
      () => {
        const found = received('Destination failing: flaky');
        return found.length > 0 ? found : undefined;
      },
      { timeout: 60_000, message: "the failure rate's alert at the sink" },
    );
    expect(message?.text).toMatch(
      /flaky in group default: (\d+) of \1 attempts failed in the last 5 min \(threshold 50%\), most often: HTTP 503/,
    );
  });

  it('alerts once when a 410 Gone pauses a destination, and when an operator pauses one', async () => {
    const [gone] = await waitFor(
      () => {
        const found = received('Destination paused: gone');
        return found.length > 0 ? found : undefined;
      },
      { timeout: 60_000, message: "the 410's pause alerted" },
    );
    expect(gone?.text).toContain(`gone in group default: 410 Gone from ${origin}`);
    expect(gone?.text).toContain('npx webhook-inbox destinations resume gone');

    await setDestinationPaused(pool, ALICE, 'steady', true);
    const [paused] = await waitFor(
      () => {
        const found = received('Destination paused: steady');
        return found.length > 0 ? found : undefined;
      },
      { timeout: 30_000, message: "the operator's pause alerted" },
    );
    // Who paused it is in the audit log; the alert masks an address, as every alert's text does.
    expect(paused?.text).toContain('steady in group default: paused by [email]');
    expect(paused?.text).toContain(`destination: ${CONSOLE}/destinations/steady`);
  });

  it('sends each episode once: another worker looking at the same destinations claims none of them', async () => {
    const notified: Alert[] = [];
    const other = startDestinationMonitor({
      pool,
      alerter: { notify: (alert) => void notified.push(alert) },
      destinations: config.destinations.map((d) => ({ name: d.name, group: d.group })),
      failureRate: config.destinationAlerts.failureRate,
      logger: pino({ level: 'silent' }),
      intervalMs: 3_600_000,
    });
    await other.check();
    await other.close();
    expect(notified).toEqual([]);
    expect((await alerted('flaky')).sort()).toEqual(['failure_rate', 'open']);
    expect(received("Destination's circuit open")).toHaveLength(1);
    expect(received('Destination failing: flaky')).toHaveLength(1);
    expect(received('Destination paused: gone')).toHaveLength(1);
    expect(received('Destination paused: steady')).toHaveLength(1);
    expect(received('Destination paused')).toHaveLength(2);
  });

  it("ends an episode with its cause: a resumed destination's next pause is a new episode", async () => {
    expect(await alerted('steady')).toEqual(['paused']);
    await setDestinationPaused(pool, ALICE, 'steady', false);
    expect(await alerted('steady')).toEqual([]);
  });
});
