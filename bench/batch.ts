import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { catalogueEntry } from '@webhook-inbox/providers';
import { sampleCredentials } from '@webhook-inbox/testing';
import { signSendgrid } from '@webhook-inbox/providers';
import type { BenchContext } from './lib/context.ts';
import { httpLoad, httpRequest } from './lib/http-load.ts';
import { SERVER, spawnReceiver } from './lib/receiver-process.ts';
import { signedAhead } from './lib/stripe-requests.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import { inTurns, Turns } from './lib/turns.ts';

/** Items per request: 1 is single-event recording (the baseline), the others one batch per request. */
const SIZES = [1, 100, 1_000, 10_000] as const;
type Size = (typeof SIZES)[number];
/** Single events again, while one connection posts 10,000-item batches: what a large batch does to the others. */
const ALONGSIDE = 'alongside';
const ROUNDS = 3;
/** Single events go over many connections (as a provider's parallel deliveries), batches one after another. */
const connectionsOf = (size: Size) => (size === 1 ? 16 : 1);

/**
 * Items recorded per second when a SendGrid source receives batches of 100, 1,000 and 10,000 events, against
 * the same source receiving one event per request over 16 connections (single-event recording), in the same run:
 * one receiver process on one database, signed deliveries (ECDSA P-256, as SendGrid signs) prepared before each
 * turn's clock starts, every item a new `sg_event_id` (a new row and a new job), in alternating turns. A last
 * mode sends single events while 10,000-item batches record beside them: their latency, against single events
 * alone, is what a large batch costs the other senders. No worker runs.
 */
export async function batchBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const sliceMs = Math.max(2_000, ctx.durationMs / 2);
  const credentials = sampleCredentials(catalogueEntry('sendgrid')!);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-inbox-bench-batch-'));
  const sourcesFile = path.join(dir, 'sources.yaml');
  writeFileSync(
    sourcesFile,
    `sources:\n  mail:\n    type: sendgrid\n    secrets: [${JSON.stringify(credentials.secret)}]\n`,
  );
  const database = await ctx.postgres.database('bench_batch');
  const receiver = await spawnReceiver(SERVER, database, 16, logLevel, { WEBHOOK_SOURCES_FILE: sourcesFile });

  /** A signed delivery of `size` new events. */
  const delivery = (size: Size): Buffer => {
    const body = JSON.stringify(
      Array.from({ length: size }, () => ({
        email: 'user@example.com',
        timestamp: 1_733_356_800,
        event: 'delivered',
        sg_event_id: randomUUID(),
        sg_message_id: 'msg_1',
      })),
    );
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signSendgrid({ payload: body, privateKey: credentials.privateKey!, timestamp });
    return httpRequest(
      '/webhooks/mail',
      {
        'content-type': 'application/json',
        'x-twilio-email-event-webhook-signature': signature,
        'x-twilio-email-event-webhook-timestamp': String(timestamp),
      },
      body,
    );
  };

  const items = new Map<Size, { items: number; seconds: number; requests: number; worstMs: number }>(
    SIZES.map((size) => [size, { items: 0, seconds: 0, requests: 0, worstMs: 0 }]),
  );
  const latency = { alone: new Turns(), alongside: new Turns() };
  const port = Number(new URL(receiver.url).port);
  /** `size`-item deliveries over `connectionsOf(size)` connections for one turn; throws on any refusal. */
  const load = async (size: Size) => {
    // Enough requests signed ahead for a turn at ~20,000 items/s; more are signed as asked for.
    const ahead = Math.min(2_000, Math.ceil(((sliceMs / 1000) * 20_000) / size) + 1);
    const accepted = `"accepted":${size},`;
    const result = await httpLoad({
      host: '127.0.0.1',
      port,
      connections: connectionsOf(size),
      durationMs: sliceMs,
      next: signedAhead(() => delivery(size), ahead),
      accept: (status, body) => status === 200 && body.toString().includes(accepted),
    });
    if (result.unexpected > 0 || result.errors > 0) {
      throw new Error(`batch of ${size}: ${result.unexpected + result.errors} failed (${result.sample})`);
    }
    return result;
  };
  try {
    ctx.log(
      `batch: ${ROUNDS} turns of ${fixed(sliceMs / 1000)}s per size (${SIZES.join(', ')} items a request)`,
    );
    await inTurns(
      [...SIZES, ALONGSIDE] as const,
      ROUNDS,
      async (size) => {
        if (size === ALONGSIDE) {
          const [single] = await Promise.all([load(1), load(10_000)]);
          latency.alongside.add(single.histogram);
          return;
        }
        const result = await load(size);
        if (size === 1) latency.alone.add(result.histogram);
        const tally = items.get(size)!;
        tally.items += result.completed * size;
        tally.seconds += result.completed / result.rps;
        tally.requests += result.completed;
        tally.worstMs = Math.max(tally.worstMs, result.histogram.max / 1e6);
      },
      { abba: true },
    );
  } finally {
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const rate = (size: Size) => {
    const tally = items.get(size)!;
    return tally.items / tally.seconds;
  };
  return {
    title: 'Receiver: items recorded per second, batches vs single-event recording (same run)',
    columns: ['items a request', 'connections', 'requests', 'items /s', 'vs single', 'slowest request, ms'],
    rows: SIZES.map((size) => ({
      'items a request': size === 1 ? '1 (single events)' : size.toLocaleString('en'),
      connections: connectionsOf(size),
      requests: items.get(size)!.requests,
      'items /s': fixed(rate(size), 0),
      'vs single': fixed(rate(size) / rate(1), 2),
      'slowest request, ms': fixed(items.get(size)!.worstMs, 0),
    })),
    notes: [
      `single events' p99, ms, median turn (pooled, worst turn): alone ${latency.alone.toString()}; while 10,000-item batches record beside them ${latency.alongside.toString()}`,
      `${ROUNDS} alternating turns of ${fixed(sliceMs / 1000)}s per size, pool 16; SendGrid deliveries of ~150-byte events, every item new (a row and a job)`,
      'a batch is one transaction: one set-based insert of its events and one pg-boss insert of their jobs',
    ],
  };
}
