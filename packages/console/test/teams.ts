/**
 * Two teams' failures on one inbox, as their workers would have left them (no worker runs): the default group runs
 * `recordOrder` and `notifyCrm` for checkout sessions and alone handles `customer.created`; the billing group runs
 * `syncLedger` for checkout sessions. Not a test file.
 */
import type pg from 'pg';

/** Dead in billing (syncLedger), processed in the default group. */
export const BILLING_DEAD = 'evt_team_billing_dead';
/** Dead in the default group (notifyCrm), processed in billing. */
export const DEFAULT_DEAD = 'evt_team_default_dead';
/** Of a type only the default group has effects for. */
export const DEFAULT_ONLY = 'evt_team_default_only';
/** The customer email planted in subjects and error texts: a viewer's pages must not contain it. */
export const PLANTED_EMAIL = 'ada.planted@example.com';
export const LEDGER_ERROR = 'syncLedger: ledger locked (503)';
export const CRM_ERROR = `CRM refused ${PLANTED_EMAIL} (503)`;

export async function insertTeams(pool: pg.Pool): Promise<void> {
  await pool.query(
    `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
       ('stripe', 'checkout.session.completed', 'recordOrder', 'database', 0, 'default'),
       ('stripe', 'checkout.session.completed', 'notifyCrm', 'external', 1, 'default'),
       ('stripe', 'customer.created', 'welcome', 'external', 0, 'default'),
       ('stripe', 'checkout.session.completed', 'syncLedger', 'external', 0, 'billing')`,
  );
  const event = (id: string, type: string, status: string, error: string | null) =>
    pool.query(
      `insert into webhook_events (provider, event_id, type, status, attempts, last_error, subject)
       values ('stripe', $1, $2, $3, 3, $4, array['cus_Team1', $5])`,
      [id, type, status, error, PLANTED_EMAIL],
    );
  const failedRun = (id: string, effect: string, error: string) =>
    pool.query(
      `insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error)
       values ('stripe', $1, $2, 'failed', 3, 'stripe:' || $1 || ':' || $2, now(), $3)`,
      [id, effect, error],
    );
  const groupRow = (id: string, status: string, error: string | null) =>
    pool.query(
      `insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error)
       values ('stripe', $1, 'billing', $2, 6, $3)`,
      [id, status, error],
    );
  await event(BILLING_DEAD, 'checkout.session.completed', 'processed', null);
  await groupRow(BILLING_DEAD, 'dead', LEDGER_ERROR);
  await failedRun(BILLING_DEAD, 'syncLedger', LEDGER_ERROR);
  await event(DEFAULT_DEAD, 'checkout.session.completed', 'dead', `notifyCrm: ${CRM_ERROR}`);
  await groupRow(DEFAULT_DEAD, 'processed', null);
  await failedRun(DEFAULT_DEAD, 'notifyCrm', CRM_ERROR);
  await event(DEFAULT_ONLY, 'customer.created', 'processed', null);
}
