/**
 * What the database says after a scenario: rows per key, jobs per key, event statuses, and how many times each
 * database effect actually ran (a statement trigger counts every committed INSERT on the product tables, so a
 * count above the expected one is a duplicate effect: the worker tests' audit, extended to Shopify orders).
 */
import { EVENTS_QUEUE } from '../../../packages/inbox/src/queue.ts';
import type pg from 'pg';
import { auditCounts, installEffectAudit } from '@webhook-inbox/scenarios/worker';

export type EffectTable = 'accounts' | 'subscriptions' | 'shopify_orders';
export type EffectCounts = Partial<Record<EffectTable, number>>;

/** Installs the statement audit on accounts, subscriptions and shopify_orders. Test databases only. */
export async function installAudit(pool: pg.Pool): Promise<void> {
  await installEffectAudit(pool);
  await pool.query(`
    drop trigger if exists shopify_orders_audit on shopify_orders;
    create trigger shopify_orders_audit after insert on shopify_orders
      for each statement execute function effect_audit_statement();
  `);
}

export interface Snapshot {
  /** Rows in webhook_events. */
  rows: number;
  byStatus: Record<string, number>;
  /** Jobs of the events queue (a retry is the same job). */
  jobs: number;
  /** Event keys with more than one job. */
  keysWithSeveralJobs: number;
  /** Jobs not finished: created, retry or active. */
  pendingJobs: number;
  activeJobs: number;
  /** Jobs of the events queue by pg-boss state. */
  jobStates: Record<string, number>;
  /** Up to 5 events not processed: their status, attempts and their jobs' states. */
  unprocessed: Array<{ key: string; status: string; attempts: number; jobs: string[] }>;
  /** Committed INSERT statements per product table. */
  effects: EffectCounts;
  /** effect_runs rows that are not `completed`. */
  unfinishedEffects: number;
}

async function one(pool: pg.Pool, text: string, values: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(text, values);
  return rows[0]?.n ?? 0;
}

export async function snapshot(pool: pg.Pool): Promise<Snapshot> {
  const statuses = await pool.query<{ status: string; n: number }>(
    'select status, count(*)::int as n from webhook_events group by status order by status',
  );
  const byStatus = Object.fromEntries(statuses.rows.map((row) => [row.status, row.n]));
  const jobStates = await pool.query<{ state: string; n: number }>(
    'select state::text as state, count(*)::int as n from pgboss.job where name = $1 group by state',
    [EVENTS_QUEUE],
  );
  const byState = Object.fromEntries(jobStates.rows.map((row) => [row.state, row.n]));
  const audit = await auditCounts(pool);
  return {
    rows: Object.values(byStatus).reduce((a, b) => a + b, 0),
    byStatus,
    jobs: Object.values(byState).reduce((a, b) => a + b, 0),
    keysWithSeveralJobs: await one(
      pool,
      `select count(*)::int as n from (
         select 1 from pgboss.job where name = $1 group by data->>'provider', data->>'eventId' having count(*) > 1
       ) d`,
      [EVENTS_QUEUE],
    ),
    pendingJobs: (byState.created ?? 0) + (byState.retry ?? 0) + (byState.active ?? 0),
    activeJobs: byState.active ?? 0,
    jobStates: byState,
    unprocessed: (
      await pool.query<{ key: string; status: string; attempts: number; jobs: string[] }>(
        `select e.event_id as key, e.status, e.attempts,
                array(select j.state::text || coalesce(' retry ' || j.retry_count, '') from pgboss.job j
                       where j.name = $1 and j.data->>'provider' = e.provider and j.data->>'eventId' = e.event_id)
                  as jobs
           from webhook_events e where e.status <> 'processed' order by e.received_at limit 5`,
        [EVENTS_QUEUE],
      )
    ).rows,
    effects: {
      accounts: audit.accounts ?? 0,
      subscriptions: audit.subscriptions ?? 0,
      shopify_orders: audit.shopify_orders ?? 0,
    },
    unfinishedEffects: await one(
      pool,
      `select count(*)::int as n from effect_runs where status <> 'completed'`,
    ),
  };
}

export async function processedCount(pool: pg.Pool): Promise<number> {
  return one(pool, `select count(*)::int as n from webhook_events where status = 'processed'`);
}

/** Keys (of `keys`) that have no row in webhook_events. */
export async function missingKeys(
  pool: pg.Pool,
  keys: ReadonlyArray<{ provider: string; key: string }>,
): Promise<string[]> {
  const { rows } = await pool.query<{ key: string }>(
    `select k.event_id as key from unnest($1::text[], $2::text[]) as k(provider, event_id)
      where not exists (select 1 from webhook_events e where e.provider = k.provider and e.event_id = k.event_id)`,
    [keys.map((k) => k.provider), keys.map((k) => k.key)],
  );
  return rows.map((row) => row.key);
}

/** Effects expected once per event, summed. */
export function sumEffects(items: ReadonlyArray<{ effects: EffectCounts }>): Required<EffectCounts> {
  const total = { accounts: 0, subscriptions: 0, shopify_orders: 0 };
  for (const { effects } of items) {
    for (const [table, n] of Object.entries(effects) as Array<[EffectTable, number]>) total[table] += n;
  }
  return total;
}

/** Effects run more often than expected, summed over the tables (negative means some did not run). */
export function duplicateEffects(actual: EffectCounts, expected: EffectCounts): number {
  let extra = 0;
  for (const table of ['accounts', 'subscriptions', 'shopify_orders'] as const) {
    extra += (actual[table] ?? 0) - (expected[table] ?? 0);
  }
  return extra;
}
