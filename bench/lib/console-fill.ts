import type pg from 'pg';
import { foldFailureCounts } from '../../packages/operator/src/failure-counts.ts';
import { ensurePayloadPartitions } from '../../packages/inbox/src/partitions.ts';

/** The effect each event type runs (one each), as `effect_routes` registers it for all three providers. */
const EFFECTS = `(array['sendWelcomeEmail', 'syncCrm', 'updateSubscription'])[1 + (i / 3) % 3]`;
const TYPES = `(array['checkout.session.completed', 'invoice.paid', 'customer.subscription.updated'])[1 + (i / 3) % 3]`;
const PROVIDER = `(array['stripe', 'shopify', 'acme'])[1 + i % 3]`;
/** 1 in 20 failed (retrying), 2 in 20 dead, the rest processed: 50,000 failed and 100,000 dead in 1,000,000. */
const STATUS = `case when i % 20 = 0 then 'failed' when i % 20 in (1, 2) then 'dead' else 'processed' end`;
/**
 * A failing event's error: five causes, each with parts that vary per event (addresses, ids, numbers) so that
 * the failure groups' fingerprint has to normalize them; most of them the SMTP server refusing connections.
 */
const ERROR = `case (i / 20) % 8
  when 0 then 'checkout session cs_test_' || lpad(i::text, 8, '0') || ' has no customer email'
  when 1 then 'CRM unavailable (503), request req_' || lpad(i::text, 10, '0')
  when 2 then 'timeout after ' || (5000 + i % 7) || ' ms waiting for https://crm.example.com/contacts/' || i
  when 3 then 'duplicate key value violates unique constraint "contacts_email_key"'
  else 'connect ECONNREFUSED 10.0.3.' || i % 250 || ':587'
end`;
const RECEIVED = `now() - interval '30 days' * (1 - i::float8 / $1)`;

/** How the table was filled: what the bench's notes and the docs quote. */
export interface ConsoleFill {
  events: number;
  failed: number;
  dead: number;
  /** The events of the largest bulk replay in `replay_operations`. */
  largestOperation: number;
  seconds: number;
}

/**
 * A console-sized inbox in a few statements (`insert ... select generate_series`, no round trip per row): `events`
 * events over the last 30 days from three providers (5% failed, 10% dead), their payloads (in their day's
 * partition), one ledger row each (completed, or failed with one of five errors), the attempts of the failing
 * ones, the routes, and 20 finished bulk replays (one of every failed event, the others of 500 events each);
 * then vacuumed.
 */
export async function fillConsoleTables(pool: pg.Pool, events: number): Promise<ConsoleFill> {
  const started = performance.now();
  await ensurePayloadPartitions(pool, { from: new Date(Date.now() - 31 * 86_400_000) });
  await pool.query(
    `insert into effect_routes (provider, event_type, effect, kind, position)
     select p, t, (array['sendWelcomeEmail', 'syncCrm', 'updateSubscription'])[n], 'external', 0
       from unnest(array['stripe', 'shopify', 'acme']) as p,
            unnest(array['checkout.session.completed', 'invoice.paid', 'customer.subscription.updated'])
              with ordinality as x(t, n)`,
  );
  await pool.query(
    `with event as (
       insert into webhook_events (provider, event_id, type, status, attempts, last_error, received_at, processed_at,
                                   subject)
       select ${PROVIDER}, 'evt_bench_' || i, ${TYPES}, ${STATUS}, 1 + i % 3,
              case when i % 20 in (0, 1, 2) then ${ERROR} end,
              ${RECEIVED},
              case when i % 20 > 2 then ${RECEIVED} end,
              -- What recording reads from a Stripe body (providers/subject.ts): its customer and email.
              case when i % 3 = 0 then array['cus_' || i % 1000, (i % 1000) || '@example.com'] end
         from generate_series(1, $1::int) as i
       returning provider, event_id, received_at)
     insert into webhook_event_payloads (provider, event_id, received_at, payload)
     select provider, event_id, received_at,
            jsonb_build_object('id', event_id, 'data', jsonb_build_object('object', jsonb_build_object(
              'customer', 'cus_' || (substr(event_id, 11)::int % 1000), 'amount', substr(event_id, 11)::int)))
       from event`,
    [events],
  );
  await pool.query(
    `insert into effect_runs (provider, event_id, effect, status, attempts, last_error, idempotency_key, started_at,
                              completed_at)
     select ${PROVIDER}, 'evt_bench_' || i, ${EFFECTS},
            case when i % 20 in (0, 1, 2) then 'failed' else 'completed' end, 1 + i % 3,
            case when i % 20 in (0, 1, 2) then ${ERROR} end,
            ${PROVIDER} || ':evt_bench_' || i || ':' || ${EFFECTS},
            ${RECEIVED} + interval '1 second',
            case when i % 20 > 2 then ${RECEIVED} + interval '1 second' end
       from generate_series(1, $1::int) as i`,
    [events],
  );
  await pool.query(
    `insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms,
                                  outcome, error, worker, job_id)
     select ${PROVIDER}, 'evt_bench_' || i, ${EFFECTS}, a,
            ${RECEIVED} + interval '1 minute' * a, ${RECEIVED} + interval '1 minute' * a + interval '40 ms', 40,
            case when i % 20 in (1, 2) and a = 1 + i % 3 then 'dead' else 'failed' end, ${ERROR},
            'bench/1', gen_random_uuid()::text
       from generate_series(1, $1::int) as i, generate_series(1, 1 + i % 3) as a
      where i % 20 in (0, 1, 2)`,
    [events],
  );
  await pool.query(
    `insert into replay_operations (filter, received_up_to, status, total, created_by, created_at, updated_at,
                                    finished_at)
     select case when n = 1 then '{"status": "failed"}' else '{"status": "dead", "type": "invoice.paid"}' end::jsonb,
            now() - interval '1 hour' * n, 'completed', 0, 'bench', now() - interval '1 hour' * n,
            now() - interval '1 hour' * n, now() - interval '1 hour' * n
       from generate_series(1, 20) as n`,
  );
  // The first replayed every failed event; each other one 500 dead events of its own.
  await pool.query(
    `with failed_op as (select id from replay_operations where filter->>'status' = 'failed'),
          dead_ops as (select array_agg(id order by id) as ids from replay_operations where filter->>'status' = 'dead')
     insert into replay_operation_events (operation_id, provider, event_id, outcome)
     select case when i % 20 = 0 then (select id from failed_op) else (select ids from dead_ops)[1 + (i / 20) % 19] end,
            ${PROVIDER}, 'evt_bench_' || i, effect_event_state(${STATUS})
       from generate_series(1, $1::int) as i
      where i % 20 = 0 or (i % 20 = 1 and i / 20 / 19 < 500)`,
    [events],
  );
  await pool.query(
    `update replay_operations o set total = x.n, done = x.n, enqueued = x.n
       from (select operation_id, count(*)::int as n from replay_operation_events group by operation_id) x
      where x.operation_id = o.id`,
  );
  // The failure counts' deltas the ledger's inserts appended, folded as the receivers' sampler does each minute.
  await foldFailureCounts(pool, Number.POSITIVE_INFINITY);
  // Vacuumed as autovacuum leaves a table between bursts: the visibility map set, so index-only scans stay so.
  await pool.query(
    'vacuum analyze webhook_events, webhook_event_payloads, effect_runs, effect_attempts, replay_operation_events, failure_counts',
  );
  const [counts] = (
    await pool.query<{ failed: number; dead: number; largest: number }>(
      `select count(*) filter (where status = 'failed')::int as failed,
              count(*) filter (where status = 'dead')::int as dead,
              (select max(total) from replay_operations) as largest
         from webhook_events`,
    )
  ).rows;
  return {
    events,
    failed: counts?.failed ?? 0,
    dead: counts?.dead ?? 0,
    largestOperation: counts?.largest ?? 0,
    seconds: (performance.now() - started) / 1000,
  };
}
