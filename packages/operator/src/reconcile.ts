import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type Stripe from 'stripe';
import { recordedEventTypes } from '@webhook-inbox/inbox/effect-routes';
import { ingest } from '@webhook-inbox/inbox/ingest';
import { webhookEvents } from '@webhook-inbox/inbox/sql';
import type { ReconcileCounts, ReconcileReport } from './reconcile-report.ts';

export type { ReconcileCounts, ReconcileReport };

/** How far back Stripe's `GET /v1/events` reaches. */
export const STRIPE_EVENTS_RETENTION_DAYS = 30;

// The Events API accepts at most 20 names in `types`.
const MAX_TYPES_PER_REQUEST = 20;
const PAGE_SIZE = 100;

export interface ReconcileStripeOptions {
  /** An official SDK client (`new Stripe(STRIPE_API_KEY)`). */
  stripe: Stripe;
  pool: pg.Pool;
  /** A started pg-boss; jobs are sent through `ingest()`, in the insert's transaction. */
  boss: PgBoss;
  /** Events created at or after this time are checked. Stripe keeps 30 days; older is clamped by Stripe. */
  since: Date;
  /** Events created before this time only. Default: no upper bound. */
  until?: Date;
  /**
   * Types checked in full, delivered or not: the ones the effects act on. Default: the types the worker
   * recorded effects for (`effect_routes`). Events Stripe could not deliver are checked whatever their type.
   */
  types?: readonly string[];
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The provider name events are recorded under. Default `stripe`. */
  provider?: string;
  /** Count only; record nothing. */
  dryRun?: boolean;
}

function emptyCounts(): ReconcileCounts {
  return { scanned: 0, missing: 0, ingested: 0, alreadyPresent: 0 };
}

/**
 * Finds Stripe events we never recorded and records them through the receiver's own path (`ingest()`, source
 * `reconciled`): one row and one job each, in one transaction, so the worker runs their effects as for any
 * delivery. Events already recorded are left exactly as they are (no update, no job). Running it again changes
 * nothing.
 *
 * What is listed (`GET /v1/events`, auto-paginated, `limit=100`, `created[gte]=since`):
 * - every event Stripe has not delivered successfully (`delivery_success=false`): pending or failed deliveries;
 * - every event of `types` (the ones with effects), delivered or not: a 2xx from us means it was recorded, but a
 *   delivery may have been marked successful while our database lost it (restore from backup), or the endpoint
 *   may have been disabled for a while.
 * The two lists overlap; each event is checked once. Within a page events are recorded oldest first.
 *
 * Caveat: an event whose key retention already deleted looks missing and is recorded again. Keep `keyDays`
 * (retention) longer than the reconciliation window (at most 30 days: what Stripe keeps).
 *
 * @example
 * const report = await reconcileStripe({ stripe, pool, boss, since: sinceDuration('3d'), logger });
 * // { scanned: 120, missing: 2, ingested: 2, alreadyPresent: 118, byType: { ... } }
 */
export async function reconcileStripe(options: ReconcileStripeOptions): Promise<ReconcileReport> {
  const { stripe, pool, boss, since, until, logger, provider = 'stripe', dryRun = false } = options;
  if (Number.isNaN(since.getTime())) throw new RangeError('reconcileStripe: since is not a valid date');
  if (until && !(until.getTime() > since.getTime())) {
    throw new RangeError('reconcileStripe: until must be later than since');
  }
  const types = [...new Set(options.types ?? (await recordedEventTypes(pool, provider)))];
  if (types.length === 0) {
    logger.warn(
      { provider },
      'no effects are recorded for this provider (no worker has started on this database): only the events ' +
        'Stripe could not deliver are checked',
    );
  }
  if (Date.now() - since.getTime() > STRIPE_EVENTS_RETENTION_DAYS * 86_400_000) {
    logger.warn(
      { since },
      `Stripe lists events of the last ${STRIPE_EVENTS_RETENTION_DAYS} days only: older ones cannot be reconciled`,
    );
  }

  const created: Stripe.RangeQueryParam = { gte: Math.floor(since.getTime() / 1000) };
  if (until) created.lt = Math.ceil(until.getTime() / 1000);
  const listings: Stripe.EventListParams[] = [{ created, delivery_success: false, limit: PAGE_SIZE }];
  for (let i = 0; i < types.length; i += MAX_TYPES_PER_REQUEST) {
    listings.push({ created, types: types.slice(i, i + MAX_TYPES_PER_REQUEST), limit: PAGE_SIZE });
  }

  const report: ReconcileReport = { ...emptyCounts(), byType: {}, since, until, dryRun };
  const seen = new Set<string>();

  const settle = async (page: Stripe.Event[]): Promise<void> => {
    const fresh = page.filter((event) => !seen.has(event.id));
    for (const event of fresh) seen.add(event.id);
    if (fresh.length === 0) return;
    const ids = fresh.map((e) => e.id);
    const { rows } = await pool.query<{ event_id: string }>(webhookEvents.selectRecordedIds(provider, ids));
    const present = new Set(rows.map((r) => r.event_id));
    fresh.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
    for (const event of fresh) {
      const counts = (report.byType[event.type] ??= emptyCounts());
      report.scanned++;
      counts.scanned++;
      if (present.has(event.id)) {
        report.alreadyPresent++;
        counts.alreadyPresent++;
        continue;
      }
      report.missing++;
      counts.missing++;
      if (dryRun) continue;
      const outcome = await ingest(
        { pool, boss },
        { provider, eventId: event.id, type: event.type, payloadText: JSON.stringify(event), headers: {} },
        'reconciled',
      );
      if (outcome === 'accepted') {
        report.ingested++;
        counts.ingested++;
      }
    }
  };

  for (const params of listings) {
    let page: Stripe.Event[] = [];
    for await (const event of stripe.events.list(params)) {
      page.push(event);
      if (page.length === PAGE_SIZE) {
        await settle(page);
        page = [];
      }
    }
    await settle(page);
    logger.info({ params, scanned: report.scanned, missing: report.missing }, 'reconcile: listing done');
  }

  logger.info(
    {
      provider,
      since,
      until,
      dryRun,
      scanned: report.scanned,
      missing: report.missing,
      ingested: report.ingested,
      alreadyPresent: report.alreadyPresent,
    },
    'reconcile: done',
  );
  return report;
}
