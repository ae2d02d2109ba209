/**
 * One team's worker, as a product team would write it in its own repository: it imports the inbox, registers its
 * own effects against its own table and starts in its consumer group. `node team-worker.ts <team>`, with
 * DATABASE_URL (and DATABASE_POOLER=transaction behind PgBouncer); `provisioning` runs in the default group,
 * `billing` in the group `billing`. Prints `started` once it takes jobs, and stops gracefully on SIGTERM.
 */
import { createInbox, type Inbox } from '@webhook-inbox/inbox';
import { sql } from 'drizzle-orm';

const team = process.argv[2];
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || (team !== 'provisioning' && team !== 'billing')) {
  process.stderr.write('usage: DATABASE_URL=... node team-worker.ts provisioning|billing\n');
  process.exit(2);
}

// Each team's effect writes a row of its own table per run (no unique key: a second run would show).
const inbox: Inbox =
  team === 'provisioning'
    ? createInbox().on('stripe', 'checkout.session.completed', {
        provisionAccount: async ({ event, tx }) => {
          await tx.execute(sql`insert into team_provisioning_runs (event_id) values (${event.eventId})`);
        },
      })
    : createInbox().on('stripe', ['checkout.session.completed', 'invoice.paid'], {
        recordRevenue: async ({ event, tx }) => {
          await tx.execute(sql`insert into team_billing_runs (event_id) values (${event.eventId})`);
        },
      });

const worker = await inbox.start({
  connectionString: databaseUrl,
  pooler: process.env.DATABASE_POOLER === 'transaction' ? 'transaction' : 'none',
  ...(team === 'billing' ? { group: 'billing' } : {}),
  queue: { retryLimit: 2, retryDelay: 0, retryBackoff: false, expireInSeconds: 30 },
  pollingIntervalSeconds: 0.5,
  poolSize: 4,
});
process.stdout.write('started\n');
process.once('SIGTERM', () => {
  void worker.stop({ timeoutMs: 10_000 }).then(() => process.exit(0));
});
