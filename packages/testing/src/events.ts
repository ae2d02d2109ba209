import type pg from 'pg';

/**
 * Inserts test events straight into the tables, as the receiver would have recorded them: runs `insert` (an
 * `insert into webhook_events ...` without a `returning` clause), creates the payload partitions of the days its
 * rows were received on (a test often backdates `received_at`), and gives each new row a payload in
 * `webhook_event_payloads`: `payload`, an SQL expression over the row's columns (`e.event_id`, ...; default
 * `{"id": <event id>}`) and `payloadValues` (`$3` on). One transaction; returns how many events it inserted.
 *
 * @example
 * await insertEvents(pool, `insert into webhook_events (provider, event_id, type, status, received_at)
 *                           values ('stripe', 'evt_1', 't', 'processed', now() - interval '40 days')`);
 */
export async function insertEvents(
  pool: pg.Pool,
  insert: string,
  values: unknown[] = [],
  payload = `jsonb_build_object('id', e.event_id)`,
  payloadValues: unknown[] = [],
): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ provider: string; event_id: string }>(
      `${insert} returning provider, event_id`,
      values,
    );
    const keys = [rows.map((row) => row.provider), rows.map((row) => row.event_id)];
    const recorded = `
      select e.* from webhook_events e
        join unnest($1::text[], $2::text[]) as k(provider, event_id) using (provider, event_id)`;
    await client.query(
      `select webhook_inbox_create_payload_partition(day)
         from (select distinct (received_at at time zone 'UTC')::date as day from (${recorded}) e) days`,
      keys,
    );
    await client.query(
      `insert into webhook_event_payloads (provider, event_id, received_at, payload)
       select e.provider, e.event_id, e.received_at, (${payload})::jsonb from (${recorded}) e`,
      [...keys, ...payloadValues],
    );
    await client.query('commit');
    return rows.length;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
