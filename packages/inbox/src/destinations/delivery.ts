/**
 * One delivery of one event to one destination: a job of the destination's own queue. Its idempotency key is the
 * destination's fan-out effect's (`destination.<name>` for the event), claimed in the ledger before the request and
 * completed after a 2xx, so a delivery answered 2xx is never sent again, whoever retries or replays it; each
 * request is one row of `effect_attempts` (status, latency, the answer's first KiB, the error).
 *
 * Retries follow the destination's schedule: a failed attempt sends the next one as a new job, due after the
 * schedule's delay or the answer's `Retry-After`, whichever is later, and completes its own.
 */
import type http from 'node:http';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { errorLine } from '../error-text.ts';
import { WORKER_ID, writeAttempts } from '../effects/attempts.ts';
import { eventIdempotencyKey } from '../effects/keys.ts';
import { Lease } from '../effects/lease.ts';
import { LeaseLostError } from '../effects/types.ts';
import type { EffectRef } from '../sql/idempotency-keys.ts';
import { deliveries, idempotencyKeys } from '../sql/index.ts';
import type { Destination } from './config.ts';
import { RestrictedAddressError } from './address-policy.ts';
import { send, type OutboundResult } from './outbound.ts';
import { signDelivery } from './signature.ts';
import type { DestinationLimits } from './limits.ts';

/** A delivery job's data: the event, and which attempt of the schedule this is (1 for the first). */
export interface DeliveryJob {
  provider: string;
  eventId: string;
  attempt: number;
}

/**
 * How a delivery's request ended, as metrics count it: the answer's status class, no answer (`network_error`:
 * refused, reset, timed out, TLS), or not sent because the address is restricted (`refused`).
 */
export type DeliveryOutcome = '2xx' | '3xx' | '4xx' | '5xx' | 'network_error' | 'refused';
export const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = [
  '2xx',
  '3xx',
  '4xx',
  '5xx',
  'network_error',
  'refused',
];

/** Told of every delivery request sent (the worker's metrics); must not throw. */
export interface DeliveryObserver {
  delivery(delivery: { destination: string; outcome: DeliveryOutcome; durationMs: number }): void;
}

/** How often a paused destination's waiting deliveries look again. */
const PAUSED_RECHECK_SECONDS = 30;
/** How long a delivery whose key another attempt holds waits before trying again. */
const HELD_RECHECK_SECONDS = 5;
/** A claim outlives its request by this much: the attempt's record and its mark. */
export const LEASE_MARGIN_MS = 30_000;
/** How long a delivery waits for one of its destination's slots before it goes back to the queue for a second. */
const SLOT_WAIT_MS = 60_000;

export interface DeliveryContext {
  pool: pg.Pool;
  boss: PgBoss;
  log: Logger;
  destination: Destination;
  queue: string;
  limits: DestinationLimits;
  /** Aborts when the worker stops: a delivery waiting for a slot goes back to the queue. */
  stopping: AbortSignal;
  /** The destination's keep-alive connections (`destinationAgent`). */
  agent?: http.Agent | undefined;
  observer?: DeliveryObserver | undefined;
}

/** The effect name (and ledger key's name) of a destination: `destination.<name>`. */
export function destinationEffect(name: string): string {
  return `destination.${name}`;
}

/**
 * A delivery put back because its destination takes none now (paused, or its circuit open until the probe): how
 * long its queue need not be fetched, since every delivery fetched meanwhile would be put back the same way. At
 * most `PAUSED_RECHECK_SECONDS`, so a resume (which also closes an open circuit) is seen as soon as before.
 */
export interface DeliveryHold {
  seconds: number;
  reason: 'paused' | 'circuit open';
}

/**
 * Runs one delivery job; throws only when the database fails (pg-boss then retries the job). Answers a hold when
 * the destination takes no deliveries now.
 */
export async function deliver(
  ctx: DeliveryContext,
  job: DeliveryJob,
  jobId: string,
): Promise<DeliveryHold | undefined> {
  const { destination, pool } = ctx;
  const effect = destinationEffect(destination.name);
  const ref: EffectRef = {
    provider: job.provider,
    eventId: job.eventId,
    effect,
    idempotencyKey: eventIdempotencyKey(job.provider, job.eventId, effect),
  };
  const leaseMs = destination.timeoutMs + LEASE_MARGIN_MS;
  const claimedAt = performance.now();
  const {
    rows: [start],
  } = await pool.query<deliveries.DeliveryStart>(
    deliveries.startDelivery(
      { name: destination.name, probeAfterMs: destination.breaker.probeAfterMs },
      ref,
      leaseMs,
      ctx.limits.slotTerms,
    ),
  );
  if (start?.state === 'paused') {
    await later(ctx, job, PAUSED_RECHECK_SECONDS);
    return { seconds: PAUSED_RECHECK_SECONDS, reason: 'paused' };
  }
  if (start?.state === 'open' && !start.probe) {
    const wait = start.probeAt ? (start.probeAt.getTime() - Date.now()) / 1000 : PAUSED_RECHECK_SECONDS;
    await later(ctx, job, Math.max(1, wait));
    return { seconds: Math.min(Math.max(1, wait), PAUSED_RECHECK_SECONDS), reason: 'circuit open' };
  }
  if (!start?.type || !start.receivedAt || start.payload === null) {
    ctx.log.warn(
      { provider: job.provider, eventId: job.eventId },
      'delivery of an event purged meanwhile: dropped',
    );
    return undefined;
  }
  if (start.keyAttempts === null || start.claimToken === null) {
    // Completed: delivered (2xx recorded) by an earlier attempt. Held: another attempt is sending it now.
    if (start.heldUntil) await later(ctx, job, HELD_RECHECK_SECONDS);
    return undefined;
  }
  const fence = { keyAttempts: start.keyAttempts, token: start.claimToken };
  const event = { type: start.type, receivedAt: start.receivedAt, payload: start.payload };

  const slot =
    start.slot !== null && start.slotToken !== null
      ? ctx.limits.held(start.slot, start.slotToken)
      : await ctx.limits.takeSlot(AbortSignal.any([ctx.stopping, AbortSignal.timeout(SLOT_WAIT_MS)]));
  if (!slot) {
    // Not sent: the key is let go at once, so the delivery's next job need not wait for the lease.
    await pool.query(idempotencyKeys.releaseClaim(ref, fence));
    await later(ctx, job, 1);
    return undefined;
  }
  let sent: Sent | 'lost';
  try {
    sent = await request(ctx, job, ref, event, new Lease(pool, ref, fence, leaseMs, claimedAt, ctx.log));
  } catch (error) {
    await slot.free();
    throw error;
  }
  if (sent === 'lost') {
    // Another attempt took the key over while this one waited (for a slot, or the rate limit).
    await slot.free();
    return undefined;
  }
  const { startedAt, result, log } = sent;
  ctx.observer?.delivery({
    destination: destination.name,
    outcome: outcomeOf(result),
    durationMs: result.durationMs,
  });
  const ok = result.kind === 'answer' && result.status >= 200 && result.status < 300;
  const last = job.attempt >= destination.retrySchedule.length;
  const error = ok ? null : failureOf(result);
  // The attempt's row, the key's mark, the breaker and the slot, in one statement: the slot is freed with them, or
  // by itself when the statement fails (its lease would free it too, later).
  const end: deliveries.DeliveryEnd = {
    destination: destination.name,
    ref,
    fence,
    slot,
    attempt: {
      provider: job.provider,
      eventId: job.eventId,
      effect,
      startedAt,
      finishedAt: new Date(startedAt.getTime() + result.durationMs),
      durationMs: result.durationMs,
      outcome: ok ? 'completed' : last && !gone(result) ? 'dead' : 'failed',
      error,
      worker: WORKER_ID,
      jobId,
      responseStatus: result.kind === 'answer' ? result.status : null,
      responseExcerpt: result.kind === 'answer' ? result.excerpt : null,
    },
  };
  const ending = ok
    ? deliveries.deliverySucceeded(end)
    : deliveries.deliveryFailed(
        end,
        error ?? 'failed',
        gone(result)
          ? { kind: 'pause', reason: `410 Gone from ${destination.url.origin}` }
          : {
              kind: 'failure',
              threshold: destination.breaker.failures,
              probeAfterMs: destination.breaker.probeAfterMs,
              cause: error ?? 'failed',
            },
      );
  let ended: deliveries.DeliveryEnded | undefined;
  try {
    ended = (await pool.query<deliveries.DeliveryEnded>(ending)).rows[0];
  } catch (failure) {
    await slot.free().catch(() => undefined);
    throw failure;
  }
  if (!ended?.attemptAdded) {
    // Its number was taken by the fan-out's batch writing the same effect's history at that moment: again, after
    // it (an event purged meanwhile gets no row either way).
    await writeAttempts(pool, [end.attempt]).catch((failure: unknown) =>
      log.error({ err: errorLine(failure) }, 'could not record the delivery attempt'),
    );
  }

  if (ok) {
    if (!ended?.completed)
      log.warn('delivered, but the claim was taken before the mark: it may be sent twice');
    return undefined;
  }
  if (gone(result)) {
    // 410 Gone: the endpoint says it will not take deliveries any more. Paused until an operator resumes it;
    // this delivery, and every one after it, waits for that.
    log.warn('destination answered 410 Gone: paused until resumed');
    await later(ctx, job, PAUSED_RECHECK_SECONDS);
    return { seconds: PAUSED_RECHECK_SECONDS, reason: 'paused' };
  }
  if (last) {
    log.warn({ attempts: job.attempt, error }, 'delivery failed its last scheduled attempt: given up');
    return undefined;
  }
  const scheduled = destination.retrySchedule[job.attempt] ?? 0;
  const asked =
    result.kind === 'answer' && result.retryAfterMs !== undefined ? result.retryAfterMs / 1000 : 0;
  log.info(
    { attempt: job.attempt, error, retryInSeconds: Math.max(scheduled, asked) },
    'delivery failed: retrying',
  );
  await ctx.boss.send(
    ctx.queue,
    { ...job, attempt: job.attempt + 1 },
    { startAfter: Math.max(scheduled, asked) },
  );
  return undefined;
}

interface Sent {
  startedAt: Date;
  result: OutboundResult;
  log: Logger;
}

/**
 * Waits for the delivery's start under the rate limit and sends it, its claim proven right before the request:
 * what was sent and its answer, or `lost` when another attempt took the key over meanwhile (nothing sent).
 */
async function request(
  ctx: DeliveryContext,
  job: DeliveryJob,
  ref: EffectRef,
  event: { type: string; receivedAt: Date; payload: string },
  lease: Lease,
): Promise<Sent | 'lost'> {
  const { destination } = ctx;
  await ctx.limits.awaitStart();
  try {
    await lease.hold();
  } catch (error) {
    if (error instanceof LeaseLostError) return 'lost';
    throw error;
  }
  const log = ctx.log.child({ provider: job.provider, eventId: job.eventId });
  const startedAt = new Date();
  const body = bodyOf(destination, job, ref.idempotencyKey, event);
  const result = await send({
    url: destination.url,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'webhook-inbox',
      ...destination.headers,
      ...signDelivery(ref.idempotencyKey, startedAt, body, destination.secrets),
    },
    body,
    timeoutMs: destination.timeoutMs,
    allowPrivateNetwork: destination.allowPrivateNetwork,
    agent: ctx.agent,
  });
  return { startedAt, result, log };
}

/** The same attempt again after `seconds` (paused, circuit open, key held): not counted as an attempt. */
async function later(ctx: DeliveryContext, job: DeliveryJob, seconds: number): Promise<void> {
  await ctx.boss.send(ctx.queue, job, { startAfter: Math.ceil(seconds) });
}

function gone(result: OutboundResult): boolean {
  return result.kind === 'answer' && result.status === 410;
}

function outcomeOf(result: OutboundResult): DeliveryOutcome {
  if (result.kind === 'error') {
    return result.error instanceof RestrictedAddressError ? 'refused' : 'network_error';
  }
  if (result.status >= 500) return '5xx';
  if (result.status >= 400) return '4xx';
  return result.status >= 300 ? '3xx' : '2xx';
}

function failureOf(result: OutboundResult): string {
  if (result.kind === 'error') return errorLine(result.error);
  return `HTTP ${result.status}`;
}

/**
 * `raw`: the body as recorded (PostgreSQL's text of it: the same JSON, every digit kept); `envelope`: the event's
 * facts around it. Built as text so that an integer past 2^53 keeps its digits.
 */
export function bodyOf(
  destination: Pick<Destination, 'body'>,
  job: Pick<DeliveryJob, 'provider' | 'eventId'>,
  key: string,
  event: { type: string; receivedAt: Date; payload: string },
): string {
  if (destination.body === 'raw') return event.payload;
  return (
    `{"provider":${JSON.stringify(job.provider)},"type":${JSON.stringify(event.type)},` +
    `"key":${JSON.stringify(job.eventId)},"id":${JSON.stringify(key)},` +
    `"receivedAt":${JSON.stringify(event.receivedAt.toISOString())},"payload":${event.payload}}`
  );
}
