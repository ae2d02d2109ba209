import type { Database } from '@webhook-inbox/db';
import type { Logger } from 'pino';
import type {
  InboxEventBase,
  TypedEventType,
  TypedInboxEvent,
  TypedProvider,
} from '@webhook-inbox/providers/payloads';
import { CodedError } from '../errors.ts';

export type {
  InboxEventBase,
  ProviderPayloads,
  TypedEventOf,
  TypedEventType,
  TypedInboxEvent,
  TypedProvider,
} from '@webhook-inbox/providers/payloads';

/** The Drizzle transaction a database effect runs in; its ledger row commits in the same transaction. */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/** A Shopify event: the payload stays `unknown` until a schema parses it. */
export type ShopifyInboxEvent<T extends string = string> = T extends string ? ShopifyEventOf<T> : never;

interface ShopifyEventOf<T extends string> extends InboxEventBase {
  provider: 'shopify';
  type: T;
  /** `X-Shopify-Shop-Domain`, e.g. `shop.myshopify.com`. */
  shopDomain: string;
}

/** Any other provider (Standard Webhooks senders, catalogue providers without types): payload `unknown`. */
export type GenericInboxEvent = InboxEventBase;

/** The event type handed to effects registered for `provider` and `type`. */
export type InboxEventFor<P extends string, T extends string> = P extends 'shopify'
  ? ShopifyInboxEvent<T>
  : P extends TypedProvider
    ? TypedInboxEvent<P, Extract<T, TypedEventType<P>>>
    : GenericInboxEvent;

interface EffectContextBase<E> {
  event: E;
  /** Effect name as registered. */
  effect: string;
  /** Deterministic: event key + effect name, or the effect's scope + name. */
  idempotencyKey: string;
  /** 1 on the first try of this job, 2 on its first retry, ... */
  attempt: number;
  /** Carries provider, eventId and effect. */
  log: Logger;
}

export interface DatabaseEffectContext<E> extends EffectContextBase<E> {
  /** Everything written through `tx` commits together with the effect's ledger row, or not at all. */
  tx: Tx;
}

export interface ExternalEffectContext<E> extends EffectContextBase<E> {
  /**
   * For reads. Not a transaction: nothing can commit atomically with an email. It takes a connection from the
   * worker's effect pool (`poolSize`), not the one that holds the effect's claim: that connection carries the
   * claims and marks of the other effects of its round, which a slow read would hold up and a transaction opened
   * on it would take in.
   */
  db: Database;
  /**
   * Proves that this attempt still holds the effect's claim (its lease, by its fencing token) and extends it;
   * throws `LeaseLostError` when it does not (the worker froze or lost the database past the lease, and another
   * attempt may be running the effect). The runner calls it right before `run`. An effect that waits before its
   * external call (a connection pool, a rate limiter, a queue) calls it again right before the call, so the call
   * never starts after the lease is gone. Free while the lease last written has more than half its length left by
   * the monotonic clock (which counts a stopped process's time); one round trip otherwise.
   */
  holdLease: () => Promise<void>;
}

export type DatabaseEffectFn<E> = (ctx: DatabaseEffectContext<E>) => Promise<void> | void;
export type ExternalEffectFn<E> = (ctx: ExternalEffectContext<E>) => Promise<void> | void;

export interface DatabaseEffect<E> {
  kind: 'database';
  run: DatabaseEffectFn<E>;
  /** Once per scope instead of once per event (see `scopedIdempotencyKey`); `undefined`: once per event. */
  scope?: (event: E) => string | undefined;
}

export interface ExternalEffect<E> {
  kind: 'external';
  run: ExternalEffectFn<E>;
  scope?: (event: E) => string | undefined;
}

/** A plain async function is a database effect. */
export type EffectSpec<E> = DatabaseEffectFn<E> | DatabaseEffect<E> | ExternalEffect<E>;

/** Named effects; the names are the ledger's keys, so renaming an effect makes it run again for old events. */
export type EffectMap<E> = Record<string, EffectSpec<E>>;

/**
 * Wraps a side effect outside our database (an email, an HTTP call). It is claimed before it runs and marked
 * after, so it happens at least once, and more than once only if the process dies between the two.
 *
 * @example
 * sendWelcomeEmail: external({
 *   scope: (event) => `account:${event.payload.data.object.customer}`,
 *   run: async ({ event, idempotencyKey }) => mailer.send({ ..., messageId: idempotencyKey }),
 * }),
 */
export function external<E>(definition: Omit<ExternalEffect<E>, 'kind'>): ExternalEffect<E> {
  return { kind: 'external', ...definition };
}

/** A database effect that runs once per scope (e.g. once per account) rather than once per event. */
export function database<E>(definition: Omit<DatabaseEffect<E>, 'kind'>): DatabaseEffect<E> {
  return { kind: 'database', ...definition };
}

/**
 * Thrown by an effect when retrying cannot help (a payload that fails its schema, a reference that will never
 * exist): the event goes to `dead` at once instead of after the last retry.
 */
export class PermanentEffectError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentEffectError';
  }
}

/**
 * This attempt no longer holds what it needs to run an effect: the claim of an external effect (its lease ran out
 * and another attempt took it, or the key was completed meanwhile), or the event's attempt (another attempt of the
 * event started). Nothing ran, and nothing is written over the new holder's rows; the event is the new attempt's.
 */
export class LeaseLostError extends CodedError<'lease_lost'> {
  override name = 'LeaseLostError';
  constructor(message: string) {
    super('lease_lost', message);
  }
}

/** Passed to `onDead` when an event has used its last attempt. */
export interface DeadEvent {
  provider: string;
  eventId: string;
  type: string;
  lastError: string | null;
  attempts: number;
  /** The consumer group of the worker whose attempts ran out (`default` for the default group). */
  group: string;
}

export interface EffectOutcome {
  provider: string;
  type: string;
  effect: string;
  kind: 'database' | 'external';
  /** `skipped`: already completed (by this event earlier, or under its scope by another event). */
  status: 'completed' | 'failed' | 'skipped';
  durationMs: number;
  error?: unknown;
}

export interface EventOutcome {
  provider: string;
  eventId: string;
  type: string;
  /** The worker's consumer group (`default` for the default group). */
  group: string;
  status: 'processed' | 'failed' | 'dead';
  /** From `received_at` to now, for a processed event. */
  latencyMs: number;
}

/** Counters and timings; apps/worker turns them into Prometheus metrics. */
export interface InboxObserver {
  effect?(outcome: EffectOutcome): void;
  event?(outcome: EventOutcome): void;
  /** One pg-boss batch: fetched jobs handled and settled. */
  batch?(size: number, durationMs: number): void;
}
