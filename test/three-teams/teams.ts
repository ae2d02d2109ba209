/**
 * The three teams of test/three-teams.test.ts, read by the test and by their workers (team-worker.ts): each team's
 * consumer group, its one effect on Stripe's `invoice.paid`, the cause planted to make it fail, and the account of
 * its operator at the test identity provider (`@webhook-inbox/testing/oidc`, role `operator@<team>`).
 */

/** The customer email in every event's subject and in the default team's planted cause: no viewer may see it. */
export const PLANTED_EMAIL = 'ada.three-teams@example.com';

export const TEAMS = {
  default: { effect: 'sendReceipt', cause: `smtp refused ${PLANTED_EMAIL}`, login: 'dee' },
  billing: { effect: 'syncLedger', cause: 'ledger locked', login: 'bill' },
  integrations: { effect: 'pushToSlack', cause: 'slack answered 500', login: 'ivy' },
} as const;

export type TeamName = keyof typeof TEAMS;

export const TEAM_NAMES = Object.keys(TEAMS) as TeamName[];

export function isTeam(name: string | undefined): name is TeamName {
  return name !== undefined && name in TEAMS;
}
