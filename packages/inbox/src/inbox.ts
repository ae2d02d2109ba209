import { clientClassFor, createDb, type DatabasePooler } from '@webhook-inbox/db';
import pg from 'pg';
import { PgBoss, type JobWithMetadata } from 'pg-boss';
import { pino, type Logger } from 'pino';
import { BOSS_POOL_OPTIONS } from './boss.ts';
import { tracingInstalled } from './telemetry.ts';
import { EffectRouteConflictError, recordEffectRoutes } from './effect-routes.ts';
import { EffectRegistry } from './effects/registry.ts';
import type { EffectRouteRow } from './sql/effect-routes.ts';
import { transactionSettings } from './sql/transaction-settings.ts';
import { EffectRunner } from './effects/runner.ts';
import { keepPayloadPartitionsAhead } from './partitions.ts';
import type {
  DeadEvent,
  EffectMap,
  InboxEventFor,
  InboxObserver,
  TypedEventType,
  TypedProvider,
} from './effects/types.ts';
import {
  configureQueues,
  DEFAULT_GROUP,
  DEFAULT_QUEUE_SETTINGS,
  queuesOf,
  validateGroup,
  validateQueueSettings,
  type EventJob,
  type QueueSettings,
} from './queue.ts';

/**
 * How often a worker's pg-boss looks for silent or expired jobs. With the default heartbeat (10 s) and retry delay
 * (5-10 s for a first retry), a dead worker's events start again elsewhere within about 25 s.
 */
const DEFAULT_SUPERVISE_SECONDS = 5;

/**
 * Event types a provider's effects can be registered for: those of a typed provider whose module is imported
 * (`@webhook-inbox/inbox/stripe`, `@webhook-inbox/providers/github`) are checked; others are any string.
 */
export type EventTypeOf<P extends string> = P extends TypedProvider ? TypedEventType<P> : string;

export interface InboxOptions {
  /** Logs carry provider, eventId and effect; never payloads. Default: silent. */
  logger?: Logger;
  /** An event used its last attempt (or failed permanently). Fires at least once per dead event. */
  onDead?: (event: DeadEvent) => void | Promise<void>;
  /** Counters and timings (apps/worker turns them into Prometheus metrics). */
  observer?: InboxObserver;
}

export interface InboxStartOptions {
  connectionString: string;
  /**
   * The worker's consumer group: a name for the effects of one team (1-40 characters, a lowercase letter first,
   * then lowercase letters, digits, `_` or `-`). Every group that has an effect for an event's type gets the event
   * once, with its own queue (`webhook-events.<group>`), status, retries and dead letters; the workers of one
   * group share its events. Effect names are unique per event type across groups. Default `default`: queue
   * `webhook-events`, status in `webhook_events.status`, as for a single worker.
   */
  group?: string;
  /**
   * `transaction` when `connectionString` goes through a transaction-mode pooler (PgBouncer, RDS Proxy): no named
   * statements, and the effects' settings (statement timeout, asynchronous commit) are set per transaction
   * instead of per connection. Default `none`.
   */
  pooler?: DatabasePooler;
  /** Retry policy, applied to the queues at start (the worker owns it). Default: `DEFAULT_QUEUE_SETTINGS`. */
  queue?: Partial<QueueSettings>;
  /** Jobs fetched per batch; the events of a batch run concurrently. Default 50. */
  batchSize?: number;
  /** Batches in flight at once (pg-boss `localConcurrency`). Default 4. */
  concurrency?: number;
  /** Connections for effects and the ledger. Default 20. pg-boss has its own few besides. */
  poolSize?: number;
  /**
   * How often an idle worker looks for jobs, seconds: the longest a new event, a retry that came due or a dead
   * letter waits before it starts. No NOTIFY wakes the worker (it would serialise the receiver's commits: see
   * queue.ts), and a batch that comes back full is followed by the next fetch at once. Default 0.5 (the
   * minimum pg-boss accepts).
   */
  pollingIntervalSeconds?: number;
  /**
   * How often pg-boss looks for jobs whose worker went silent (heartbeat) or expired, to retry them: a dead
   * worker's jobs wait up to the heartbeat plus this, then the retry delay. Each pass also counts the queue's
   * jobs (one statement, whichever worker's turn it is). Default 5.
   */
  superviseIntervalSeconds?: number;
  /**
   * Deadline for one statement on the effects' connections (database effects' own statements, the ledger's),
   * ms. PostgreSQL cancels a statement that runs longer (`statement_timeout`, error 57014), and the worker gives
   * up on a connection that has not answered 2 s after that (`query_timeout`: a network that stopped
   * forwarding, which no error would ever report) and closes it. Per statement, not per effect: set it above
   * the slowest statement an effect runs, locks waited for included (a claim waits for another worker's
   * transaction on the same event). The effect fails and is retried. Default 60 000.
   */
  statementTimeoutMs?: number;
  applicationName?: string;
}

export interface StopOptions {
  /** Wait for running batches (default true), at most `timeoutMs` (default 30 s); then they are abandoned. */
  graceful?: boolean;
  timeoutMs?: number;
}

/** A running worker. */
export interface InboxWorker {
  /** Stops fetching, waits (bounded) for running effects, closes connections. Idempotent. */
  stop(options?: StopOptions): Promise<void>;
}

/**
 * Declares, per provider and event type, a set of named effects, then runs them as a worker:
 * every effect of every event completes once, although providers redeliver and workers crash.
 *
 * @example
 * const inbox = createInbox({ logger, onDead: alert })
 *   .on('stripe', 'checkout.session.completed', { provisionAccount, sendWelcomeEmail })
 *   .on('shopify', 'orders/create', { saveOrder });
 * const worker = await inbox.start({ connectionString: env.DATABASE_URL });
 * process.once('SIGTERM', () => void worker.stop());
 */
export interface Inbox {
  /**
   * Registers effects for one or more event types of a provider. Stripe types are checked against the `stripe`
   * package's event types and the payload is narrowed to them; so are a typed provider's once its module is
   * imported (GitHub, Slack, Paddle: see `ProviderPayloads`). Other providers' payloads are `unknown`: parse them
   * with `parsePayload`.
   */
  on<const P extends string, const T extends EventTypeOf<P>>(
    provider: P,
    type: T | readonly T[],
    effects: EffectMap<InboxEventFor<P, T>>,
  ): Inbox;
  /** `provider type` pairs that have effects. */
  routes(): string[];
  /** The names of the effects registered for one event type, in the order they run (replay, dry runs). */
  effectsFor(provider: string, type: string): string[];
  /** Every registered (provider, type, effect): what `start()` records in `effect_routes`. */
  effectRoutes(): EffectRouteRow[];
  start(options: InboxStartOptions): Promise<InboxWorker>;
}

export function createInbox(options: InboxOptions = {}): Inbox {
  const registry = new EffectRegistry();
  const logger = options.logger ?? pino({ level: 'silent' });

  const inbox: Inbox = {
    on(provider: string, type: string | readonly string[], effects: EffectMap<never>) {
      registry.add(provider, typeof type === 'string' ? [type] : type, effects);
      return inbox;
    },
    routes: () => registry.routes(),
    effectsFor: (provider, type) => registry.get(provider, type).map((effect) => effect.name),
    effectRoutes: () => registry.list(),
    async start(start) {
      const group = validateGroup(start.group ?? DEFAULT_GROUP);
      const queues = queuesOf(group);
      const queue = validateQueueSettings({ ...DEFAULT_QUEUE_SETTINGS, ...start.queue });
      const batchSize = start.batchSize ?? 50;
      const concurrency = start.concurrency ?? 4;
      const polling = start.pollingIntervalSeconds ?? 0.5;
      const applicationName = start.applicationName ?? 'webhook-inbox-worker';
      const statementTimeoutMs = start.statementTimeoutMs ?? 60_000;
      if (!Number.isInteger(statementTimeoutMs) || statementTimeoutMs < 1) {
        throw new RangeError('statementTimeoutMs must be a positive whole number of milliseconds');
      }
      // Effects and the ledger commit without waiting for the WAL flush: the job's completion, which pg-boss commits
      // synchronously on its own pool AFTER them, flushes them too. A worker crash loses nothing committed (the
      // server has it); a database crash can only lose commits whose job is not completed yet, and those jobs run
      // again: the lost effects re-run, the durable ones are skipped. See README, "Guarantees".
      // Behind a transaction-mode pooler a connection is no session to configure: each effect transaction sets
      // both for itself, and the ledger's own statements commit durably.
      // A transaction idle for a whole heartbeat is a worker that has stopped (frozen, or cut off): the server ends
      // it, so the locks it holds do not keep the retry of its jobs waiting. A live worker never idles that long
      // inside an effect's transaction; its heartbeat would have gone silent too.
      const idleTimeoutMs = queue.heartbeatSeconds === null ? 0 : queue.heartbeatSeconds * 1000;
      const pooler = start.pooler ?? 'none';
      const sessionSettings: pg.PoolConfig =
        pooler === 'transaction'
          ? {}
          : {
              options: `-c synchronous_commit=off -c idle_in_transaction_session_timeout=${idleTimeoutMs}`,
              statement_timeout: statementTimeoutMs,
            };
      const pool = new pg.Pool({
        connectionString: start.connectionString,
        max: start.poolSize ?? 20,
        application_name: applicationName,
        ...sessionSettings,
        Client: clientClassFor(pooler),
        // Statements issued together (an external round's marks) share round trips instead of queueing.
        pipeline: true,
        connectionTimeoutMillis: 10_000,
        idleTimeoutMillis: 30_000,
        query_timeout: statementTimeoutMs + 2_000,
        // Keeps idle connections alive through NATs and firewalls and lets the OS notice a peer that vanished;
        // the probes' interval and count are the OS's (query_timeout bounds a statement on a dead connection).
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
      });
      pool.on('error', (error) => logger.warn({ err: error }, 'idle database connection failed'));
      // pg listens for errors only on idle connections: one that dies while checked out (the server restarts
      // mid-transaction) would emit an unhandled 'error' and kill the worker. The query in flight rejects anyway
      // and the connection is discarded on release; this only keeps the process alive.
      pool.on('connect', (client) =>
        client.on('error', (error) => logger.warn({ err: error }, 'database connection failed while in use')),
      );
      const boss = new PgBoss({
        ...BOSS_POOL_OPTIONS,
        connectionString: start.connectionString,
        application_name: `${applicationName}-boss`,
        // Fetches, settles, maintenance: a few connections are plenty.
        max: Math.max(4, concurrency + 3),
        // The queues send no NOTIFY (queue.ts): nothing to listen for.
        useListenNotify: false,
        schedule: false,
        migrate: false,
        superviseIntervalSeconds: start.superviseIntervalSeconds ?? DEFAULT_SUPERVISE_SECONDS,
        monitorIntervalSeconds: start.superviseIntervalSeconds ?? DEFAULT_SUPERVISE_SECONDS,
        // pg-boss's own spans (fetch, process, settle) when tracing is on; none of its work otherwise.
        openTelemetry: { enabled: tracingInstalled() },
      });
      boss.on('error', (error) => logger.error({ err: error }, 'pg-boss error'));
      boss.on('warning', (warning) => logger.warn({ warning: warning.message }, 'pg-boss warning'));

      const runner = new EffectRunner({
        pool,
        group,
        db: createDb(pool),
        transactionSettings:
          pooler === 'transaction' ? transactionSettings(statementTimeoutMs, idleTimeoutMs) : undefined,
        registry,
        logger,
        observer: options.observer,
        onDead: options.onDead,
      });

      // The receiver's inserts need a partition for each day's payloads: every worker keeps them ahead.
      const partitions = keepPayloadPartitionsAhead(pool, logger);
      try {
        await partitions.ready;
        await boss.start();
        // The queues before the routes: once the routes are recorded, the receiver sends this group's jobs.
        await configureQueues(boss, queue, group);
        // Before the first job: the receiver reads which events this group gets from the record, and replays and
        // reconciliation what it runs.
        await recordEffectRoutes(pool, registry.list(), group);
        await boss.work(
          queues.events,
          {
            batchSize,
            localConcurrency: concurrency,
            includeMetadata: true,
            perJobResults: true,
            burstWhenBatchFull: true,
            pollingIntervalSeconds: polling,
            notifyPollingIntervalSeconds: polling,
          },
          (jobs: JobWithMetadata<EventJob>[]) => runner.runBatch(jobs),
        );
        await boss.work(
          queues.deadLetters,
          {
            batchSize: 10,
            includeMetadata: true,
            pollingIntervalSeconds: polling,
            notifyPollingIntervalSeconds: polling,
          },
          (jobs: JobWithMetadata<EventJob>[]) => runner.runDeadLetters(jobs),
        );
      } catch (error) {
        partitions.stop();
        await boss.stop({ graceful: false }).catch(() => {});
        await pool.end().catch(() => {});
        if (error instanceof EffectRouteConflictError) throw error;
        throw new Error('the worker could not start (is the database migrated? run `pnpm db:migrate`)', {
          cause: error,
        });
      }
      logger.info({ group, routes: registry.routes(), batchSize, concurrency, queue }, 'worker started');

      let stopping: Promise<void> | undefined;
      return {
        stop: ({ graceful = true, timeoutMs = 30_000 } = {}) =>
          (stopping ??= (async () => {
            const started = Date.now();
            partitions.stop();
            await boss.stop({ graceful, timeout: timeoutMs, close: true });
            await pool.end();
            logger.info({ group, ms: Date.now() - started }, 'worker stopped');
          })()),
      };
    },
  };
  return inbox;
}
