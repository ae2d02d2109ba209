/**
 * A destination's deliveries as pg-boss work on its queue, which a hold stops fetching for a while.
 *
 * While a destination is paused or its circuit is open, every delivery fetched is only put back (a statement and a
 * job each): without the hold, a backlog of thousands would be fetched and put back again at every recheck, and
 * that churn would take the database's time from the destinations that are up. Held, the queue's jobs stay where
 * they are; only the few fetched beside the one that found the destination closed are put back. The hold is this
 * worker's: another worker of the group holds when one of its own deliveries finds the destination closed.
 */
import type { Job, PgBoss, WorkOptions } from 'pg-boss';
import type { Logger } from 'pino';
import { errorLine } from '../error-text.ts';
import type { DeliveryHold, DeliveryJob } from './delivery.ts';

export class DeliveryFeed {
  readonly #boss: PgBoss;
  readonly #queue: string;
  readonly #options: WorkOptions;
  readonly #deliver: (job: Job<DeliveryJob>) => Promise<DeliveryHold | undefined>;
  readonly #log: Logger;
  #resume: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    boss: PgBoss,
    queue: string,
    options: WorkOptions,
    deliver: (job: Job<DeliveryJob>) => Promise<DeliveryHold | undefined>,
    log: Logger,
  ) {
    this.#boss = boss;
    this.#queue = queue;
    this.#options = options;
    this.#deliver = deliver;
    this.#log = log;
  }

  /** Fetches and delivers the queue's jobs (again, after a hold). */
  async start(): Promise<void> {
    if (this.#stopped) return;
    await this.#boss.work<DeliveryJob>(this.#queue, this.#options, async (jobs) => {
      let hold: DeliveryHold | undefined;
      for (const job of jobs) hold = (await this.#deliver(job)) ?? hold;
      if (hold) this.#hold(hold);
    });
  }

  /** No more fetching, and no resuming after a hold; pg-boss's own stop ends the work in flight. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#resume);
  }

  #hold({ seconds, reason }: DeliveryHold): void {
    if (this.#resume || this.#stopped) return;
    this.#log.debug({ reason, seconds }, 'destination takes no deliveries now: its queue waits, not fetched');
    // Every worker of this pg-boss on the queue is this feed's. From inside a handler: without waiting, which
    // would wait for this very handler.
    void this.#boss.offWork(this.#queue, { wait: false });
    this.#resume = setTimeout(() => {
      this.#resume = undefined;
      this.start().catch((error: unknown) =>
        this.#log.error({ err: errorLine(error) }, 'could not fetch the destination’s deliveries again'),
      );
    }, seconds * 1000);
    this.#resume.unref();
  }
}
