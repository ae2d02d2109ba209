import type pg from 'pg';

/**
 * Counts every committed INSERT statement on the product tables, whether it inserted, updated or did nothing:
 * each example database effect runs exactly one such statement per run, so a count above the number of events
 * is a duplicate run (a rolled-back run leaves no row). Test-only: created in the test's own database.
 */
export async function installEffectAudit(pool: pg.Pool): Promise<void> {
  await pool.query(`
    create table if not exists effect_audit (tbl text not null, at timestamptz not null default clock_timestamp());
    create or replace function effect_audit_statement() returns trigger language plpgsql as $$
      begin insert into effect_audit (tbl) values (tg_table_name); return null; end $$;
    drop trigger if exists accounts_audit on accounts;
    create trigger accounts_audit after insert on accounts for each statement execute function effect_audit_statement();
    drop trigger if exists subscriptions_audit on subscriptions;
    create trigger subscriptions_audit after insert on subscriptions
      for each statement execute function effect_audit_statement();
  `);
}

export async function auditCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ tbl: string; n: number }>(
    'select tbl, count(*)::int as n from effect_audit group by tbl',
  );
  return Object.fromEntries(rows.map((row) => [row.tbl, row.n]));
}

export async function count(pool: pg.Pool, sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(sql, values);
  return rows[0]?.n ?? 0;
}

export async function eventStatus(pool: pg.Pool, eventId: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ status: string }>(
    'select status from webhook_events where event_id = $1',
    [eventId],
  );
  return rows[0]?.status;
}

/** No job of the events queue is waiting, retrying or running. */
export async function queueDrained(pool: pg.Pool): Promise<boolean> {
  return (
    (await count(
      pool,
      `select count(*)::int as n from pgboss.job where name = 'webhook-events' and state < 'completed'`,
    )) === 0
  );
}
