import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { createSenderBoss } from './boss.ts';
import { ingest, type IngestOutcome } from './ingest.ts';
import { configureQueues, DEFAULT_QUEUE_SETTINGS, type QueueSettings } from './queue.ts';

/**
 * A producer for tests of effects: it records events and enqueues their jobs exactly as the receiver does (the
 * same recording transaction), without HTTP or signatures, so a test can feed a real worker and assert on the
 * rows its effects write. The inbox's own tests, the worker's and the chaos scenarios all produce through it.
 *
 * @example
 * const producer = await startProducer(pool, process.env.DATABASE_URL!);
 * await producer.send({ provider: 'stripe', eventId: 'evt_1', type: 'checkout.session.completed', payload });
 */

export interface ProducedEvent {
  /** Default `test`. */
  provider?: string;
  eventId: string;
  type: string;
  /** The body as the provider sent it; default `JSON.stringify(payload)`. */
  payloadText?: string;
  /** Default `{}`; ignored when `payloadText` is given. */
  payload?: unknown;
  headers?: Record<string, string>;
}

export interface Producer {
  boss: PgBoss;
  send(event: ProducedEvent): Promise<IngestOutcome>;
  stop(): Promise<void>;
}

/**
 * Starts a sender pg-boss on `url` and configures the queues with `settings`, as the worker under test will
 * (a worker started with other settings reconfigures them).
 */
export async function startProducer(
  pool: pg.Pool,
  url: string,
  settings: QueueSettings = DEFAULT_QUEUE_SETTINGS,
): Promise<Producer> {
  const boss = createSenderBoss(url, { applicationName: 'webhook-inbox test producer' });
  await boss.start();
  await configureQueues(boss, settings);
  return {
    boss,
    send: ({ provider = 'test', eventId, type, payloadText, payload = {}, headers = {} }) =>
      ingest(
        { pool, boss },
        { provider, eventId, type, payloadText: payloadText ?? JSON.stringify(payload), headers },
      ),
    stop: () => boss.stop({ graceful: false, close: true }),
  };
}
