/**
 * Three teams' failures on one inbox, as their workers would have left them (no worker runs): the default group
 * runs `sendReceipt` for `invoice.paid` and `welcome` for `customer.created`, the group `billing` runs
 * `syncLedger` for `invoice.paid`, the group `integrations` runs `pushToSlack` for `customer.created`. Each team has
 * one failure of its own, with an error no other team's answer may contain. The admin API's and the remote CLI's
 * group tests read it.
 */

/** The error each team's failing effect recorded (its group row's or the event's `last_error`). */
export const TEAM_ERRORS = {
  default: 'sendReceipt: smtp down',
  billing: 'syncLedger: ledger locked',
  integrations: 'pushToSlack: slack answered 500',
} as const;

export type Team = keyof typeof TEAM_ERRORS;

/** Each team's one failure: its status in the team's group and its event id. */
export const TEAM_FAILURES: readonly (readonly [team: Team, status: 'failed' | 'dead', eventId: string])[] = [
  ['default', 'failed', 'evt_inv_default_failed'],
  ['billing', 'dead', 'evt_inv_billing_dead'],
  ['integrations', 'failed', 'evt_cus_integrations_failed'],
];

const SEED = `
  insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
    ('stripe', 'invoice.paid', 'sendReceipt', 'external', 0, 'default'),
    ('stripe', 'invoice.paid', 'syncLedger', 'database', 0, 'billing'),
    ('stripe', 'customer.created', 'welcome', 'external', 0, 'default'),
    ('stripe', 'customer.created', 'pushToSlack', 'external', 0, 'integrations');
  insert into webhook_events (provider, event_id, type, status, attempts, last_error) values
    ('stripe', 'evt_inv_billing_dead', 'invoice.paid', 'processed', 1, null),
    ('stripe', 'evt_inv_default_failed', 'invoice.paid', 'failed', 2, '${TEAM_ERRORS.default}'),
    ('stripe', 'evt_cus_integrations_failed', 'customer.created', 'processed', 1, null);
  insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error) values
    ('stripe', 'evt_inv_billing_dead', 'billing', 'dead', 6, '${TEAM_ERRORS.billing}'),
    ('stripe', 'evt_inv_default_failed', 'billing', 'processed', 1, null),
    ('stripe', 'evt_cus_integrations_failed', 'integrations', 'failed', 2, '${TEAM_ERRORS.integrations}');
  insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error) values
    ('stripe', 'evt_inv_billing_dead', 'sendReceipt', 'completed', 1, 'k1', now(), null),
    ('stripe', 'evt_inv_billing_dead', 'syncLedger', 'failed', 6, 'k2', now(), 'ledger locked'),
    ('stripe', 'evt_inv_default_failed', 'sendReceipt', 'failed', 2, 'k3', now(), 'smtp down'),
    ('stripe', 'evt_inv_default_failed', 'syncLedger', 'completed', 1, 'k4', now(), null),
    ('stripe', 'evt_cus_integrations_failed', 'welcome', 'completed', 1, 'k5', now(), null),
    ('stripe', 'evt_cus_integrations_failed', 'pushToSlack', 'failed', 2, 'k6', now(), 'slack answered 500');
`;

/** Writes the three teams' routes, events, group rows and effect runs (one multi-statement query). */
export async function insertThreeTeams(db: { query(text: string): Promise<unknown> }): Promise<void> {
  await db.query(SEED);
}
