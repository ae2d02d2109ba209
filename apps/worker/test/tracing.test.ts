/**
 * Tracing end to end across processes: the real receiver and the real worker (`node src/server.ts` each), with
 * tracing turned on by the standard OTEL_* variables, export to an OTLP collector stand-in on loopback. One
 * signed Stripe checkout is one trace: the request's server span, the ingest span under it, the worker's event
 * span under that (the job carried the trace context), one span per effect under the event span, and the
 * database and SMTP calls inside them. A replay is a trace of its own, linked to the first one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPool } from '@webhook-inbox/db';
import { createSenderBoss } from '@webhook-inbox/inbox';
import { replayEvent } from '@webhook-inbox/operator';
import {
  startOtlpCollector,
  useTestDatabase,
  waitFor,
  type CollectedSpan,
  type OtlpCollector,
} from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import { WORKER_ENTRY } from './support/entry.ts';
// The receiver is another app of this repository; the worker does not depend on it, this test does.
import {
  post,
  receiverEnv,
  spawnReceiver,
  STRIPE_SECRET,
  stripeDelivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';
import { queueEnv, spawnWorker, type WorkerProcess } from '@webhook-inbox/scenarios/worker';

const SERVER = 2;
const CONSUMER = 5;
const EFFECTS = ['provisionAccount', 'sendWelcomeEmail', 'recordCheckoutSubscription'];

const db = useTestDatabase();
let collector: OtlpCollector;
let smtp: SmtpSink;
let receiver: SpawnedReceiver;
let worker: WorkerProcess;
let mailDir: string;

beforeAll(async () => {
  collector = await startOtlpCollector();
  smtp = await startSmtpSink();
  mailDir = mkdtempSync(path.join(tmpdir(), 'tracing-mail-'));
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Export every 100 ms rather than every 5 s: the test waits for the spans.
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  receiver = await spawnReceiver({ ...receiverEnv(db.url), ...otel });
  worker = spawnWorker(
    {
      DATABASE_URL: db.url,
      SMTP_URL: smtp.url,
      MAIL_DIR: mailDir,
      WORKER_POLL_SECONDS: '0.5',
      ...queueEnv(),
      ...otel,
    },
    { entry: WORKER_ENTRY },
  );
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await worker?.exited;
  await receiver?.stop();
  await smtp?.close();
  await collector?.close();
  rmSync(mailDir, { recursive: true, force: true });
});

const eventSpans = (eventId: string) =>
  collector.spans.filter(
    (span) => span.name === 'webhook event' && span.attributes['webhook.event_id'] === eventId,
  );
const childrenOf = (parent: CollectedSpan) =>
  collector.spans.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId);
const effectSpansOf = (event: CollectedSpan) =>
  childrenOf(event).filter((span) => span.name.startsWith('effect '));

describe('tracing', () => {
  it('follows one signed Stripe checkout from its request to every effect, across both processes', async () => {
    const delivery = stripeDelivery();
    const answer = await post(receiver.url, delivery);
    expect(answer.status).toBe(200);

    const event = await waitFor(
      () => {
        const [span] = eventSpans(delivery.key);
        return span && effectSpansOf(span).length === EFFECTS.length && childrenOf(span) && span;
      },
      {
        timeout: 60_000,
        interval: 100,
        message: `the worker's event span and its effects (${worker.output()})`,
      },
    );
    const trace = collector.spans.filter((span) => span.traceId === event.traceId);

    const request = trace.find((span) => span.kind === SERVER);
    expect(request, 'the request span').toBeDefined();
    expect(request!.service).toBe('webhook-inbox-receiver');
    expect(request!.parentSpanId).toBe('');
    expect(request!.attributes).toMatchObject({
      'webhook.provider': 'stripe',
      'webhook.outcome': 'accepted',
      'webhook.event_id': delivery.key,
      'webhook.event_type': 'checkout.session.completed',
    });

    const ingest = trace.find((span) => span.name === 'webhook ingest');
    expect(ingest, 'the ingest span').toBeDefined();
    expect(ingest!.parentSpanId).toBe(request!.spanId);
    expect(ingest!.attributes['webhook.outcome']).toBe('accepted');
    // No statement spans in the receiver: its transaction is shared by a group commit's requests.
    const receiverSpans = trace.filter((span) => span.service === 'webhook-inbox-receiver');
    expect(receiverSpans.map((span) => span.name).sort()).toEqual([
      'POST /webhooks/:provider',
      'webhook ingest',
    ]);

    expect(event.service).toBe('webhook-inbox-worker');
    expect(event.kind).toBe(CONSUMER);
    expect(event.parentSpanId).toBe(ingest!.spanId);
    expect(event.attributes).toMatchObject({ 'webhook.attempt': 1, 'webhook.replay': false });

    const effects = effectSpansOf(event);
    expect(effects.map((span) => span.attributes['webhook.effect.name']).sort()).toEqual([...EFFECTS].sort());
    for (const effect of effects) {
      expect(effect.attributes).toMatchObject({
        'webhook.effect.attempt': 1,
        'webhook.effect.outcome': 'completed',
      });
    }
    const email = effects.find((span) => span.attributes['webhook.effect.name'] === 'sendWelcomeEmail')!;
    expect(email.attributes['webhook.effect.kind']).toBe('external');
    expect(childrenOf(email).map((span) => span.name)).toContain('smtp send');
    const provision = effects.find((span) => span.attributes['webhook.effect.name'] === 'provisionAccount')!;
    expect(provision.attributes['webhook.effect.kind']).toBe('database');
    expect(
      childrenOf(provision).some((span) => span.attributes['db.system.name'] ?? span.attributes['db.system']),
    ).toBe(true);

    // Keys and outcomes only: neither the payload nor a secret is in any span.
    const everything = JSON.stringify(collector.spans);
    const email_ = (
      JSON.parse(delivery.body) as { data: { object: { customer_details: { email: string } } } }
    ).data.object.customer_details.email;
    expect(everything).not.toContain(email_);
    expect(everything).not.toContain(STRIPE_SECRET);
    expect(everything).not.toContain(delivery.headers['Stripe-Signature']!);
  });

  it('starts a new trace for a replay, linked to the first delivery', async () => {
    const delivery = stripeDelivery();
    expect((await post(receiver.url, delivery)).status).toBe(200);
    const first = await waitFor(
      () => {
        const [span] = eventSpans(delivery.key);
        return span && effectSpansOf(span).length === EFFECTS.length && span;
      },
      { timeout: 60_000, interval: 100, message: 'the first delivery traced' },
    );

    const pool = createPool({ connectionString: db.url, max: 2 });
    const boss = createSenderBoss(db.url, { applicationName: 'tracing-test' });
    try {
      await boss.start();
      const result = await replayEvent({ pool, boss }, 'stripe', delivery.key, {
        forceEffect: 'provisionAccount',
      });
      expect(result.enqueued).toBe(true);
    } finally {
      await boss.stop({ graceful: false, close: true });
      await pool.end();
    }

    const replay = await waitFor(
      () => {
        const span = eventSpans(delivery.key).find((candidate) => candidate.traceId !== first.traceId);
        return span && effectSpansOf(span).length === EFFECTS.length && span;
      },
      { timeout: 60_000, interval: 100, message: 'the replay traced' },
    );
    expect(replay.parentSpanId).toBe('');
    expect(replay.attributes['webhook.replay']).toBe(true);
    expect(replay.links.map((link) => link.traceId)).toEqual([first.traceId]);
    const outcomes: Record<string, unknown> = {};
    for (const span of effectSpansOf(replay)) {
      outcomes[String(span.attributes['webhook.effect.name'])] = span.attributes['webhook.effect.outcome'];
    }
    // Only the forced effect runs again; the ledger skips the others.
    expect(outcomes).toEqual({
      provisionAccount: 'completed',
      sendWelcomeEmail: 'skipped',
      recordCheckoutSubscription: 'skipped',
    });
  });
});
