/**
 * Destinations in a worker: each destination is a database effect of its consumer group (`destination.<name>`,
 * the fan-out) and a queue of its own (`webhook-destination.<name>`, the deliveries).
 *
 * The fan-out runs in the event's job like any effect, once per event (the ledger's guarantee), and sends the
 * delivery's job in the effect's own transaction: a delivery exists exactly when the fan-out committed. Replaying
 * an event with `--force-effect destination.<name>` forgets the delivery's key (the fan-out's) and runs the fan-out
 * again: the event is delivered to that destination again, through the existing replay paths.
 *
 * Deliveries run on the destination's queue with its own concurrency and rate limit, both shared by every worker
 * of the destination (`limits.ts`), so a slow or down destination holds only its own slots: the others'
 * deliveries never wait behind it. A paused destination's queue, or one whose circuit is open, is not fetched
 * until it may take deliveries again (`feed.ts`).
 */
import { createPool, type DatabasePooler } from '@webhook-inbox/db';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { fromDrizzle, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { BOSS_POOL_OPTIONS } from '../boss.ts';
import { errorLine } from '../error-text.ts';
import type { Inbox } from '../inbox.ts';
import { database } from '../effects/types.ts';
import { destinationStates } from '../sql/index.ts';
import type { Destination } from './config.ts';
import {
  deliver,
  destinationEffect,
  LEASE_MARGIN_MS,
  type DeliveryJob,
  type DeliveryObserver,
} from './delivery.ts';
import { DeliveryFeed } from './feed.ts';
import { DestinationLimits } from './limits.ts';
import { destinationAgent } from './outbound.ts';
import { matches, type MatchableEvent } from './match.ts';

/** The queue of a destination's deliveries. */
export function destinationQueue(name: string): string {
  return `webhook-destination.${name}`;
}

export interface DestinationsOptions {
  connectionString: string;
  /**
   * Where deliveries read events and write the ledger and states. Default: a pool of the destinations' own, of
   * 2 + their concurrencies' sum connections (at most 50), ended by `stop`.
   */
  pool?: pg.Pool;
  /** `transaction` behind a transaction-mode pooler (statements unnamed), for the pool made here. */
  pooler?: DatabasePooler;
  destinations: readonly Destination[];
  log: Logger;
  /** Told of every delivery request (metrics); its throw is logged, never the delivery's. */
  observer?: DeliveryObserver;
  /** How often an idle delivery slot polls its queue. Default 1 s. */
  pollingIntervalSeconds?: number;
}

export interface Destinations {
  /** Registers each destination's fan-out effect on `inbox` (call before `inbox.start`). */
  register(inbox: Inbox): void;
  /** Creates the queues and records the destinations; call before the inbox starts (its fan-outs send to them). */
  start(): Promise<void>;
  /** Starts delivering. */
  work(): Promise<void>;
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * The destinations of one worker: its group's (a destination of another group is fanned out and delivered by that
 * group's workers).
 */
export function createDestinations(options: DestinationsOptions): Destinations {
  const boss = new PgBoss({
    ...BOSS_POOL_OPTIONS,
    connectionString: options.connectionString,
    max: 2 + options.destinations.length,
    application_name: 'webhook-inbox-destinations',
    // The inbox worker's pg-boss supervises every queue (expired and silent jobs, these queues' among them).
    supervise: false,
    schedule: false,
    migrate: false,
    createSchema: false,
    persistWarnings: false,
  });
  boss.on('error', (error) => options.log.error({ err: errorLine(error) }, 'destinations queue error'));
  const ownPool = options.pool === undefined;
  const pool =
    options.pool ??
    createPool({
      connectionString: options.connectionString,
      max: Math.min(50, 2 + options.destinations.reduce((sum, d) => sum + d.concurrency, 0)),
      applicationName: 'webhook-inbox-destinations',
      connectionTimeoutMillis: 30_000,
      pooler: options.pooler ?? 'none',
      onError: (error) => options.log.warn({ err: errorLine(error) }, 'destinations pool connection error'),
    });
  let started = false;
  const stopping = new AbortController();
  const limits = new Map(
    options.destinations.map((d) => [d.name, new DestinationLimits(pool, d, LEASE_MARGIN_MS)]),
  );
  const agents = new Map(options.destinations.map((d) => [d.name, destinationAgent(d.url, d.concurrency)]));
  const observer: DeliveryObserver | undefined = options.observer && {
    delivery(delivery) {
      try {
        options.observer?.delivery(delivery);
      } catch (error) {
        options.log.warn({ err: errorLine(error) }, 'delivery observer failed');
      }
    },
  };

  const feeds: DeliveryFeed[] = [];

  return {
    register(inbox) {
      for (const destination of options.destinations) {
        const effect = destinationEffect(destination.name);
        const queue = destinationQueue(destination.name);
        const fanOut = database<MatchableEvent & { eventId: string }>({
          run: async ({ event, tx }) => {
            if (!matches(destination, event)) return;
            const job: DeliveryJob = { provider: event.provider, eventId: event.eventId, attempt: 1 };
            const first = destination.retrySchedule[0] ?? 0;
            await boss.send(queue, job, {
              db: fromDrizzle(tx, sql),
              ...(first > 0 ? { startAfter: first } : {}),
            });
          },
        });
        for (const [provider, types] of registrations(destination)) {
          inbox.on(provider, types, { [effect]: fanOut as never });
        }
      }
    },
    async start() {
      if (options.destinations.length === 0) return;
      await boss.start();
      started = true;
      for (const destination of options.destinations) {
        await boss.createQueue(destinationQueue(destination.name), {
          // A job fails only when the database does (a delivery's own failures are its schedule's): retried soon.
          retryLimit: 5,
          retryDelay: 5,
          retryBackoff: true,
          expireInSeconds: Math.ceil(destination.timeoutMs / 1000) + 120,
        });
      }
      if (options.destinations.length > 0) {
        await pool.query(
          destinationStates.registerDestinations(
            options.destinations.map((d) => ({ name: d.name, url: d.url.href })),
          ),
        );
      }
      for (const limit of limits.values()) await limit.register();
    },
    async work() {
      if (!started) return;
      for (const destination of options.destinations) {
        const queue = destinationQueue(destination.name);
        const log = options.log.child({ destination: destination.name });
        const ctx = {
          pool,
          boss,
          log,
          destination,
          queue,
          limits: limits.get(destination.name)!,
          stopping: stopping.signal,
          observer,
          agent: agents.get(destination.name),
        };
        const feed = new DeliveryFeed(
          boss,
          queue,
          {
            // Two at a time, so that a full fetch is a burst: pg-boss then fetches again at once rather than
            // after the polling interval (a batch of one never bursts), and a backlog drains at the limits' pace.
            batchSize: 2,
            burstWhenBatchFull: true,
            localConcurrency: destination.concurrency,
            pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
          },
          (job) => deliver(ctx, job.data, job.id),
          log,
        );
        feeds.push(feed);
        await feed.start();
      }
    },
    async stop({ timeoutMs = 10_000 } = {}) {
      stopping.abort();
      for (const feed of feeds.splice(0)) feed.stop();
      if (started) {
        started = false;
        await boss.stop({ graceful: true, timeout: timeoutMs, close: true });
      }
      for (const agent of agents.values()) agent.destroy();
      if (ownPool && !pool.ending) await pool.end();
    },
  };
}

/**
 * Where a destination's fan-out is registered: per source, its exact types, or `*` when a type has a wildcard (or
 * for every source: `*`); the fan-out itself checks the types and the body filter.
 */
export function registrations(destination: Pick<Destination, 'events'>): Map<string, string[]> {
  const byProvider = new Map<string, Set<string>>();
  for (const selector of destination.events) {
    const types = byProvider.get(selector.source) ?? new Set<string>();
    for (const type of selector.types) types.add(type.includes('*') ? '*' : type);
    byProvider.set(selector.source, types);
  }
  return new Map(
    [...byProvider].map(([provider, types]) => [provider, types.has('*') ? ['*'] : [...types].sort()]),
  );
}
