import type { EventSource } from '@webhook-inbox/db';
import { InvalidPayloadError } from './errors.ts';
import { keyOf } from './event-key.ts';
import type { VerifiedEvent } from '@webhook-inbox/providers';
import { recordBatch, type BatchEntry, type IngestDeps, type IngestOutcome } from './recording.ts';
import { jobTraceContext } from './telemetry.ts';

export interface GroupCommitOptions {
  /**
   * Transactions open at once, each on its own pool connection (at most the pool's size). Requests that arrive
   * while they are all open wait for the next one to end, and then go together in one transaction.
   */
  maxTransactions: number;
  /** Events in one transaction at most. */
  maxBatch: number;
  /**
   * Told of every transaction that ended: committed, failed (its requests rejected `UnavailableError`), split
   * (a payload PostgreSQL refused, isolated by retrying the halves), or refused (that payload, alone).
   */
  onBatch?: (report: BatchReport) => void;
}

export interface BatchReport {
  /** The requests it held (a key sent twice counts twice). */
  requests: number;
  /** Distinct events (keys) it inserted or found. */
  events: number;
  outcome: 'committed' | 'failed' | 'split' | 'refused';
}

/** Records events like `ingest()`, several concurrent ones per transaction. */
export interface GroupCommit {
  /**
   * Resolves `accepted` or `duplicate` once the transaction holding this event (and its job) has committed;
   * rejects with `InvalidPayloadError` when PostgreSQL refuses this event's payload, and with `UnavailableError`
   * when its transaction failed (nothing of it is recorded, or, when the commit's answer was lost, all of it).
   */
  record(event: VerifiedEvent, source?: EventSource): Promise<IngestOutcome>;
  /**
   * Records the events of one request (a batch delivery) in one transaction of their own, all or nothing, with
   * the same key-sorted insert and job insert as `record`; resolves each event's outcome, in the order given (a
   * key repeated in `events` is `accepted` once at most, then `duplicate`). Rejects as `record` does, for all of
   * them: `InvalidPayloadError` when PostgreSQL refuses any payload (nothing recorded), `UnavailableError` when
   * the transaction failed. It takes one of the `maxTransactions` slots while it runs, without waiting for one.
   */
  recordAll(events: readonly VerifiedEvent[], source?: EventSource): Promise<IngestOutcome[]>;
}

export const DEFAULT_GROUP_COMMIT = { maxTransactions: 4, maxBatch: 64 } as const;

interface Waiting {
  event: VerifiedEvent;
  source: EventSource;
  /** The request's trace (its ingest span), carried in the job so the worker's span joins it; `{}` when off. */
  trace: ReturnType<typeof jobTraceContext>;
  resolve(outcome: IngestOutcome): void;
  reject(error: unknown): void;
}

/** The requests for one key in a batch: the first is inserted, the rest answer `duplicate` behind it. */
interface Keyed {
  key: string;
  first: Waiting;
  rest: Waiting[];
}

/**
 * Group commit: every `record()` waiting while earlier transactions run is recorded in one transaction
 * (`recordBatch`, which `ingest()` runs for a batch of one), with one multi-row insert
 * (`webhookEvents.insertEvents`), one pg-boss `insert()` per queue of the jobs of the rows it created (the default
 * group's, and one per other consumer group the events went to), and one commit; then each caller gets its own
 * answer. No timer: a lone event starts its transaction at once
 * (after the current turn of the event loop, which lets events that arrived together go together), and batches
 * grow only while `maxTransactions` transactions are already open.
 *
 * The guarantees are `ingest()`'s: nothing resolves before the commit that holds the event and its job; a failed
 * transaction rejects its own events only; the same key twice resolves one `accepted` and the rest `duplicate`.
 * An event whose payload PostgreSQL refuses fails the whole statement, so the batch is split in halves until
 * that event is alone (its own `InvalidPayloadError`) and its neighbours are recorded without it.
 *
 * @example
 * const recorder = createGroupCommit({ pool, boss }, DEFAULT_GROUP_COMMIT);
 * const outcome = await recorder.record(event); // 'accepted' | 'duplicate'
 */
export function createGroupCommit(deps: IngestDeps, options: GroupCommitOptions): GroupCommit {
  const waiting: Waiting[] = [];
  let open = 0;
  let scheduled = false;

  const startTransactions = () => {
    scheduled = false;
    while (open < options.maxTransactions && waiting.length > 0) {
      const batch = waiting.splice(0, options.maxBatch);
      open++;
      void settle(batch).finally(() => {
        open--;
        schedule();
      });
    }
  };
  const schedule = () => {
    if (scheduled || waiting.length === 0) return;
    scheduled = true;
    setImmediate(startTransactions);
  };

  /** Answers every request of the batch, whatever happens (this never rejects). */
  const settle = async (batch: Waiting[]): Promise<void> => {
    const byKey = new Map<string, Keyed>();
    for (const request of batch) {
      const key = keyOf(request.event.provider, request.event.eventId);
      const known = byKey.get(key);
      if (known) known.rest.push(request);
      else byKey.set(key, { key, first: request, rest: [] });
    }
    const keyed = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    await commitOrSplit(keyed);
  };

  const report = (keyed: Keyed[], outcome: BatchReport['outcome']) =>
    options.onBatch?.({
      requests: keyed.reduce((sum, k) => sum + 1 + k.rest.length, 0),
      events: keyed.length,
      outcome,
    });

  const commitOrSplit = async (keyed: Keyed[]): Promise<void> => {
    let created: Set<string>;
    try {
      created = await recordBatch(deps, keyed.map(entryOf));
    } catch (error) {
      if (error instanceof InvalidPayloadError && keyed.length > 1) {
        report(keyed, 'split');
        const half = keyed.length >>> 1;
        await commitOrSplit(keyed.slice(0, half));
        await commitOrSplit(keyed.slice(half));
        return;
      }
      if (error instanceof InvalidPayloadError) {
        // Alone now: its key's other requests may carry another body, so they get a transaction of their own.
        const [{ first, rest }] = keyed as [Keyed];
        options.onBatch?.({ requests: 1, events: 1, outcome: 'refused' });
        first.reject(error);
        waiting.push(...rest);
        schedule();
        return;
      }
      report(keyed, 'failed');
      for (const { first, rest } of keyed) for (const request of [first, ...rest]) request.reject(error);
      return;
    }
    report(keyed, 'committed');
    for (const { key, first, rest } of keyed) {
      first.resolve(created.has(key) ? 'accepted' : 'duplicate');
      for (const request of rest) request.resolve('duplicate');
    }
  };

  const recordAll = async (
    events: readonly VerifiedEvent[],
    source: EventSource = 'webhook',
  ): Promise<IngestOutcome[]> => {
    if (events.length === 0) return [];
    const trace = jobTraceContext();
    const byKey = new Map<string, Keyed>();
    const keys = events.map((event) => {
      const key = keyOf(event.provider, event.eventId);
      const request: Waiting = { event, source, trace, resolve: () => {}, reject: () => {} };
      const known = byKey.get(key);
      if (known) known.rest.push(request);
      else byKey.set(key, { key, first: request, rest: [] });
      return key;
    });
    const keyed = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    open++;
    let created: Set<string>;
    try {
      created = await recordBatch(deps, keyed.map(entryOf));
    } catch (error) {
      report(keyed, error instanceof InvalidPayloadError ? 'refused' : 'failed');
      throw error;
    } finally {
      open--;
      schedule();
    }
    report(keyed, 'committed');
    const answered = new Set<string>();
    return keys.map((key) => {
      if (!created.has(key) || answered.has(key)) return 'duplicate';
      answered.add(key);
      return 'accepted';
    });
  };

  return {
    recordAll,
    record: (event, source = 'webhook') =>
      new Promise<IngestOutcome>((resolve, reject) => {
        waiting.push({ event, source, trace: jobTraceContext(), resolve, reject });
        schedule();
      }),
  };
}

/** The batch entry of a key's first request (the rest answer `duplicate` behind it). */
function entryOf({ key, first }: Keyed): BatchEntry {
  return { key, event: first.event, source: first.source, trace: first.trace };
}
