/**
 * One of three teams' workers on one inbox (test/three-teams.test.ts), as a product team would write it:
 * `node team-worker.ts default|billing|integrations` with DATABASE_URL starts the team's worker in its consumer
 * group, with the team's one database effect on Stripe's `invoice.paid`. The effect writes a `team_runs` row per
 * run; on an event whose `metadata.break` names the team it fails with the team's planted cause
 * (`planted_causes.message`) while that row exists. Retries are an hour apart, so a failed event stays `failed`
 * until someone replays it. Prints `started` once it takes jobs, and stops gracefully on SIGTERM.
 */
import { createInbox, type DatabaseEffectFn } from '@webhook-inbox/inbox';
import type { StripeInboxEvent } from '@webhook-inbox/inbox/stripe';
import { sql } from 'drizzle-orm';
import { isTeam, TEAMS } from './teams.ts';

const team = process.argv[2];
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || !isTeam(team)) {
  process.stderr.write('usage: DATABASE_URL=... node team-worker.ts default|billing|integrations\n');
  process.exit(2);
}

const effect: DatabaseEffectFn<StripeInboxEvent<'invoice.paid'>> = async ({ event, tx }) => {
  if (event.payload.data.object.metadata?.['break'] === team) {
    const planted = await tx.execute<{ message: string }>(
      sql`select message from planted_causes where team = ${team}`,
    );
    const cause = planted.rows[0]?.message;
    if (cause !== undefined) throw new Error(cause);
  }
  await tx.execute(sql`insert into team_runs (team, event_id) values (${team}, ${event.eventId})`);
};

const worker = await createInbox()
  .on('stripe', 'invoice.paid', { [TEAMS[team].effect]: effect })
  .start({
    connectionString: databaseUrl,
    group: team,
    queue: { retryLimit: 3, retryDelay: 3600, retryDelayMax: 3600, retryBackoff: false, expireInSeconds: 30 },
    pollingIntervalSeconds: 0.5,
    poolSize: 2,
  });
process.stdout.write('started\n');
process.once('SIGTERM', () => {
  void worker.stop({ timeoutMs: 10_000 }).then(() => process.exit(0));
});
