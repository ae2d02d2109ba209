/**
 * Every secret-bearing configuration value kept out of errors, logs, traces and metrics. The real receiver and the
 * real worker run as processes with each secret-bearing variable of their schemas (and each secret of a sources
 * file) set to a planted value unique to this run, tracing to an OTLP collector, logging at debug; requests then
 * fail in every way (bad signatures, wrong tokens, a right key with a bad body, a forged Host, an identity
 * provider that is down, an email whose SMTP login is refused, a dead event alerted), and so does a start-up with
 * bad values (exit 2). Then stdout, stderr, every HTTP answer, both `/metrics` and every exported span are grepped
 * for each planted value: none may appear. A new secret variable without a planted value fails the first test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CATALOGUE } from '@webhook-inbox/providers';
import {
  getWithHost,
  startOtlpCollector,
  useTempFiles,
  useTestDatabase,
  waitFor,
  type OtlpCollector,
  startAlertSink,
  type AlertSink,
} from '@webhook-inbox/testing';
import { findFreePort } from '@webhook-inbox/testing/embedded';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plant, plantedEnvironment, unplanted, type PlantedEnvironment } from './planted-secrets.ts';
import { spawnReceiver, stripeDelivery, type SpawnedReceiver } from '@webhook-inbox/scenarios/receiver';
import { spawnWorker, type WorkerProcess } from '@webhook-inbox/scenarios/worker';

const db = useTestDatabase();
const files = useTempFiles('secrets-test-');
const ROLE = `planted_${plant('role').split('-').at(-1)}`;
let env: PlantedEnvironment;
let collector: OtlpCollector;
let smtp: SmtpSink;
let alerts: AlertSink;
let receiver: SpawnedReceiver;
let worker: WorkerProcess;
let workerUrl: string;
let mailDir: string;
/** Every HTTP answer read, as `<status> <body>`. */
const answers: string[] = [];

const RECEIVER_ENTRY = path.join(import.meta.dirname, '../apps/receiver/src/server.ts');
const WORKER_ENTRY = path.join(import.meta.dirname, '../apps/worker/src/server.ts');
const OTEL = {
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '100',
};

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Sends a request and keeps its answer for the grep. */
async function request(url: string, init: RequestInit = {}): Promise<number> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  answers.push(`${response.status} ${await response.text()}`);
  return response.status;
}

beforeAll(async () => {
  const password = plant('database-password');
  await sql(`create role ${ROLE} login superuser password '${password}'`);
  const databaseUrl = new URL(db.url);
  databaseUrl.username = ROLE;
  databaseUrl.password = password;
  [collector, smtp, alerts] = await Promise.all([startOtlpCollector(), startSmtpSink(), startAlertSink()]);
  mailDir = mkdtempSync(path.join(tmpdir(), 'secrets-mail-'));
  env = plantedEnvironment({
    databaseUrl: databaseUrl.href,
    databasePassword: password,
    smtpPort: Number(new URL(smtp.url).port),
    alertUrl: alerts.url,
    // Nothing listens there: a sign-in finds the identity provider down.
    oidcIssuer: 'http://127.0.0.1:9',
  });
  env.receiver.WEBHOOK_SOURCES_FILE = files.write('sources.yaml', env.sourcesYaml);
  const otel = { ...OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
  receiver = await spawnReceiver({ ...env.receiver, ...otel, LOG_LEVEL: 'debug' });
  const port = await findFreePort();
  workerUrl = `http://127.0.0.1:${port}`;
  worker = spawnWorker(
    {
      ...env.worker,
      ...otel,
      LOG_LEVEL: 'debug',
      WORKER_PORT: String(port),
      MAIL_DIR: mailDir,
      WORKER_RETRY_LIMIT: '0',
      WORKER_POLL_SECONDS: '0.5',
    },
    { entry: WORKER_ENTRY },
  );
  await waitFor(async () => (await fetch(`${workerUrl}/healthz`).catch(() => undefined))?.status === 200, {
    timeout: 120_000,
    message: 'the worker to listen',
  });
}, 240_000);

afterAll(async () => {
  worker?.kill('SIGTERM');
  await worker?.exited;
  await receiver?.stop();
  await Promise.all([collector?.close(), smtp?.close(), alerts?.close()]);
  if (mailDir) rmSync(mailDir, { recursive: true, force: true });
  await sql(`drop owned by ${ROLE}; drop role if exists ${ROLE}`).catch(() => {});
});

/** Where each planted value appears in `texts` (by name), as `<where it was planted> in <where it was found>`. */
function leaks(texts: Record<string, string>): string[] {
  return Object.entries(env.planted).flatMap(([where, value]) =>
    Object.entries(texts)
      .filter(([, text]) => text.includes(value))
      .map(([place]) => `${where} in ${place}`),
  );
}

describe('planted secrets', () => {
  it('plants every secret-bearing variable of the receiver and worker schemas', () => {
    expect(unplanted(env)).toEqual([]);
  });

  it('appear in no log line, HTTP answer, metric or span, whatever fails', async () => {
    const publicUrl = receiver.url;
    const junk = JSON.stringify({ id: 'evt_secrets_junk', type: 'x', object: 'page' });
    const forged = {
      'content-type': 'application/json',
      'stripe-signature': 't=1700000000,v1=00',
      'x-signature': 'sha256=00',
      authorization: `Basic ${Buffer.from('hooks:wrong').toString('base64')}`,
    };
    const sources = ['stripe', 'shopify', 'acme', 'file-hmac', 'file-query', 'file-basic', 'file-meta'];
    for (const name of [...sources, ...CATALOGUE.map((entry) => entry.type)]) {
      expect(
        await request(`${publicUrl}/webhooks/${name}`, { method: 'POST', body: junk, headers: forged }),
        name,
      ).toBeLessThan(500);
    }
    const { query, basic, verifyToken } = env.fileSecrets;
    // Past authentication with the right credentials, then refused for the body.
    await request(`${publicUrl}/webhooks/file-query?key=${query}`, { method: 'POST', body: 'not json' });
    await request(`${publicUrl}/webhooks/file-basic`, {
      method: 'POST',
      body: 'not json',
      headers: { authorization: `Basic ${Buffer.from(`hooks:${basic}`).toString('base64')}` },
    });
    // Handshakes: the right verify token (the challenge alone comes back), and a wrong mode with it.
    const metaToken = env.planted['receiver META_WEBHOOK_VERIFY_TOKEN']!;
    for (const [name, token] of [
      ['file-meta', verifyToken],
      ['meta', metaToken],
    ] as const) {
      expect(
        await request(
          `${publicUrl}/webhooks/${name}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=42`,
        ),
      ).toBe(200);
      await request(
        `${publicUrl}/webhooks/${name}?hub.mode=unsubscribe&hub.verify_token=${token}&hub.challenge=42`,
      );
    }

    // The admin API and the console: wrong tokens, a right token on a bad request, a forged Host.
    const management = receiver.managementUrl;
    const admin = { authorization: `Bearer ${env.planted['receiver ADMIN_TOKEN']!}` };
    await request(`${management}/admin/events`, {
      headers: { authorization: 'Bearer wrong-token-0123456789' },
    });
    await request(`${management}/admin/events?from=yesterday`, { headers: admin });
    await request(`${management}/admin/events/stripe/evt_missing/replay`, { method: 'POST', headers: admin });
    answers.push(JSON.stringify(await getWithHost(management, '/admin/events', 'rebound.example', admin)));
    await request(`${management}/console/login/oidc`);
    answers.push(JSON.stringify(await getWithHost(workerUrl, '/metrics', 'rebound.example')));

    // A real event: its welcome email's SMTP login is refused, so it goes dead and is alerted.
    const delivery = stripeDelivery({ secret: env.planted['receiver STRIPE_WEBHOOK_SECRET']! });
    expect(
      await request(`${publicUrl}${delivery.path}`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      }),
    ).toBe(200);
    await waitFor(() => alerts.bodies.length > 0, { timeout: 60_000, message: 'the dead event alerted' });
    answers.push(...alerts.bodies);
    await waitFor(() => new Set(collector.spans.map((span) => span.service)).size >= 2, {
      timeout: 30_000,
      message: 'spans from both processes',
    });

    const metrics = async (url: string) => (await fetch(`${url}/metrics`)).text();
    const texts = {
      'receiver output': receiver.output(),
      'worker output': worker.output(),
      'HTTP answers': answers.join('\n'),
      'receiver /metrics': await metrics(management),
      'worker /metrics': await metrics(workerUrl),
      spans: collector.bodies.join('\n'),
    };
    expect(texts['worker output']).toContain('"level":50'); // the refused SMTP login was logged
    expect(leaks(texts)).toEqual([]);
  });

  it('a start-up with bad values exits 2 naming the variables, never the values', async () => {
    const bad = plant('bad-value');
    const receiverRun = spawnWorker(
      {
        DATABASE_URL: `postgres://inbox:${bad}@`,
        ADMIN_TOKEN: `short!${bad}`,
        STRIPE_WEBHOOK_SECRET: `${bad},`,
        STANDARD_WEBHOOKS: `acme=not-whsec-${bad}`,
        POSTMARK_WEBHOOK_SECRET: `no-colon-${bad}`,
        ADYEN_WEBHOOK_SECRET: `not-hex-${bad}`,
        OIDC_CLIENT_SECRET: bad,
        CONSOLE_SESSION_SECRET: 'short',
      },
      { entry: RECEIVER_ENTRY },
    );
    const workerRun = spawnWorker(
      {
        DATABASE_URL: `postgres://inbox:${bad}@`,
        SMTP_URL: `ftp://mailer:${bad}@127.0.0.1`,
        ALERT_WEBHOOK_URL: `not-a-url-${bad}`,
      },
      { entry: WORKER_ENTRY },
    );
    // A sources file read once the variables are right: a secret of the wrong form is named by source and position.
    const sourcesRun = spawnWorker(
      {
        DATABASE_URL: db.url,
        WEBHOOK_SOURCES_FILE: files.write(
          'bad-sources.yaml',
          `sources:\n  bad-basic:\n    type: basic-auth\n    secrets: ["${bad}"]\n` +
            '    eventKey: { pointer: /id }\n    eventType: { pointer: /type }\n',
        ),
      },
      { entry: RECEIVER_ENTRY },
    );
    for (const run of [receiverRun, workerRun, sourcesRun]) {
      expect(await run.exited).toBe(2);
      expect(run.output()).toMatch(/invalid configuration/);
      expect(run.output()).not.toContain(bad);
    }
    expect(receiverRun.output()).toMatch(/ADMIN_TOKEN/);
    expect(workerRun.output()).toMatch(/SMTP_URL/);
    expect(sourcesRun.output()).toMatch(/source "bad-basic": secret #1/);
  });
});
