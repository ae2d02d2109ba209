/**
 * Destination alerts and metrics from a real worker, fed by real deliveries to a loopback endpoint: one destination answers
 * 503 (its circuit opens after 3 failures, its failure rate passes the threshold), one answers 410 Gone (paused),
 * one answers 200 until an operator pauses it. Each episode is one alert at a real sink, naming the destination, its
 * group and the cause, with the destination's console link, recorded in alerts_sent; a second worker's look sends
 * none again. Its /metrics counts the deliveries by outcome and latency, and reads the backlogs and states, labelled
 * by the declared destinations only; promtool accepts the exposition.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { Principal } from '@webhook-inbox/operator/access/roles';
import { setDestinationPaused } from '@webhook-inbox/operator/destinations';
import { startDestinationMonitor, type Alert } from '@webhook-inbox/operator/alerts';
import { checkoutEvent, queueEnv, startProducer } from '@webhook-inbox/scenarios/worker';
import {
  metricValue,
  onPath,
  requireTool,
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

const hasPromtool = requireTool(
  'promtool',
  onPath('promtool'),
  "Debian's prometheus package: apt-get install prometheus",
);

async function scrape(): Promise<string> {
  const response = await fetch(`${worker.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  return response.text();
}

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

describe('destination metrics', () => {
  it("counts each destination's deliveries by outcome, with their latency, from the first scrape on", async () => {
    const text = await waitFor(
      async () => {
        const text = await scrape();
        const count = (destination: string, outcome: string) =>
          metricValue(text, 'webhook_destination_deliveries_total', { destination, outcome }) ?? 0;
        return count('flaky', '5xx') >= 3 && count('gone', '4xx') >= 1 && count('steady', '2xx') >= 4
          ? text
          : undefined;
      },
      { timeout: 60_000, message: 'the deliveries counted' },
    );
    // Every outcome of every declared destination is a series, at 0 until it happens.
    expect(
      metricValue(text, 'webhook_destination_deliveries_total', { destination: 'steady', outcome: '5xx' }),
    ).toBe(0);
    expect(
      metricValue(text, 'webhook_destination_deliveries_total', {
        destination: 'steady',
        outcome: 'refused',
      }),
    ).toBe(0);
    expect(
      metricValue(text, 'webhook_destination_delivery_duration_seconds_count', { destination: 'flaky' }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      metricValue(text, 'webhook_destination_delivery_duration_seconds_bucket', {
        destination: 'steady',
        le: '+Inf',
      }),
    ).toBeGreaterThanOrEqual(4);
    // Bounded: no destination label but the declared ones.
    const labelled = [...text.matchAll(/^webhook_destination_\w+\{[^}]*destination="([^"]+)"/gm)].map(
      (m) => m[1],
    );
    expect(new Set(labelled)).toEqual(new Set(['flaky', 'gone', 'steady']));
  });

  it("reads each destination's backlog and state from PostgreSQL at scrape time", async () => {
    const text = await waitFor(
      async () => {
        const text = await scrape();
        return metricValue(text, 'webhook_destination_state', { destination: 'flaky', state: 'open' }) === 1
          ? text
          : undefined;
      },
      { timeout: 60_000, message: "the flaky destination's circuit open on /metrics" },
    );
    expect(metricValue(text, 'webhook_destination_state', { destination: 'flaky', state: 'active' })).toBe(0);
    expect(metricValue(text, 'webhook_destination_state', { destination: 'gone', state: 'paused' })).toBe(1);
    // flaky's failed deliveries wait an hour for their retry, gone's wait for a resume: none is done.
    const { rows } = await pool.query<{ name: string; n: number }>(
      `select name, count(*)::int as n from pgboss.job
        where name like 'webhook-destination.%' and state in ('created', 'retry', 'active') group by name`,
    );
    const pending = Object.fromEntries(rows.map((row) => [row.name, row.n]));
    expect(metricValue(text, 'webhook_destination_backlog', { destination: 'flaky' })).toBe(
      pending['webhook-destination.flaky'],
    );
    expect(pending['webhook-destination.flaky']).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'webhook_destination_backlog', { destination: 'gone' })).toBeGreaterThanOrEqual(
      1,
    );
  });

  it.runIf(hasPromtool)("`promtool check metrics` accepts the destinations' series", async () => {
    const text = await scrape();
    const ours = text
      .split('\n')
      .filter((line) => /^(# (HELP|TYPE) )?webhook_destination_/.test(line))
      .join('\n');
    expect(ours).toContain('webhook_destination_backlog');
    const run = spawnSync('promtool', ['check', 'metrics'], { input: `${ours}\n`, encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
