/**
 * Three teams on one inbox, from real processes: one receiver (its admin API and console on the management
 * listener, sign-in through a local OpenID Connect provider) and one worker per consumer group (default, billing,
 * integrations; test/three-teams/team-worker.ts), fed signed Stripe deliveries over HTTP. Each team's effect fails
 * on a cause planted for it. Then each team, with its own credentials only:
 * - its operator token drives the remote CLI as a process (`events --group <team> --status failed --url --token`,
 *   no DATABASE_URL): exactly its failed events, with its errors, nothing of another team's;
 * - its operator (`operator@<team>`) signs in to the console in Chromium, sees its one failure group and none of
 *   the others', filters the group's events, and replays the group: in PostgreSQL only its effect ran again;
 * - a viewer's pages hold no planted customer email.
 */
import { createPool } from '@webhook-inbox/db';
import { runCli, runRemoteCli } from '@webhook-inbox/scenarios/cli';
import {
  post,
  receiverEnv,
  spawnReceiver,
  stripeDelivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';
import { spawnWorker, type WorkerProcess } from '@webhook-inbox/scenarios/worker';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import {
  launchChromium,
  requireChromium,
  signInThroughProvider,
  type Browser,
} from '@webhook-inbox/testing/browser';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  startIdentityProvider,
  TEAM_ROLE_MAPPING,
  type IdentityProvider,
} from '@webhook-inbox/testing/oidc';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PLANTED_EMAIL, TEAM_NAMES, TEAMS, type TeamName } from './three-teams/teams.ts';

// Five processes and a browser on a two-core machine shared with other work: each step waits on its own condition.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });

const TEAM_WORKER = new URL('./three-teams/team-worker.ts', import.meta.url).pathname;
const ADMIN_TOKEN = 'three-teams-admin-token-0123456789';
const db = useTestDatabase();
let pool: pg.Pool;
let idp: IdentityProvider;
let receiver: SpawnedReceiver;
const workers: WorkerProcess[] = [];
let browser: Browser | undefined;
const tokens: Partial<Record<TeamName, string>> = {};

/** Two events break each team's effect (and no other's); two break none. */
const FAILING = Object.fromEntries(
  TEAM_NAMES.map((team) => [team, [1, 2].map((n) => `evt_3t_${team}_${n}`)]),
) as Record<TeamName, string[]>;
const HEALTHY = ['evt_3t_healthy_1', 'evt_3t_healthy_2'];

/** A signed `invoice.paid` of the planted customer; `breaks` names the team whose effect fails on it. */
function invoicePaid(eventId: string, breaks?: TeamName) {
  const body = JSON.stringify({
    id: eventId,
    object: 'event',
    type: 'invoice.paid',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        id: `in_${eventId}`,
        object: 'invoice',
        customer: 'cus_ThreeTeams',
        customer_email: PLANTED_EMAIL,
        metadata: breaks ? { break: breaks } : {},
      },
    },
  });
  return stripeDelivery({ id: eventId, body });
}

/** Each event's status in each consumer group, as sorted lines `<event id> <group> <status>`. */
async function statuses(): Promise<string> {
  const { rows } = await pool.query<{ line: string }>(
    `select line from (select event_id || ' default ' || status as line from webhook_events
                       union all
                       select event_id || ' ' || consumer_group || ' ' || status from webhook_event_groups) s
      order by line collate "C"`,
  );
  return rows.map((row) => row.line).join('\n');
}

/** What every event should come to: failed in the group its cause breaks (until replayed), processed in the others. */
function expectedStatuses(replayed: TeamName[]): string {
  const lines = [...HEALTHY, ...TEAM_NAMES.flatMap((team) => FAILING[team])].flatMap((id) =>
    TEAM_NAMES.map((group) => {
      const failing = FAILING[group].includes(id) && !replayed.includes(group);
      return `${id} ${group} ${failing ? 'failed' : 'processed'}`;
    }),
  );
  return lines.sort().join('\n');
}

async function settled(replayed: TeamName[], what: string): Promise<void> {
  const expected = expectedStatuses(replayed);
  await waitFor(
    async () => {
      const seen = await statuses();
      // The last difference is the timeout's cause.
      if (seen !== expected) throw new Error(`expected\n${expected}\nseen\n${seen}`);
      return true;
    },
    { timeout: 120_000, interval: 250, message: what },
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${workers.map((w) => w.output()).join('\n')}`, {
      cause: error,
    });
  });
}

/** The ledger and the teams' own rows: what a replay may change. */
async function effectsRan(): Promise<{ runs: string[]; ledger: string[] }> {
  const runs = await pool.query<{ row: string }>(
    `select team || ' ' || event_id || ' x' || count(*) as row from team_runs group by team, event_id`,
  );
  const ledger = await pool.query<{ row: string }>(
    `select effect || ' ' || event_id || ' ' || status || ' ' || attempts as row from effect_runs`,
  );
  return { runs: runs.rows.map((r) => r.row).sort(), ledger: ledger.rows.map((r) => r.row).sort() };
}

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 2 });
  // The teams' own table, and the causes planted in their effects.
  await pool.query(`create table team_runs (team text not null, event_id text not null);
                    create table planted_causes (team text primary key, message text not null)`);
  for (const team of TEAM_NAMES) {
    await pool.query('insert into planted_causes values ($1, $2)', [team, TEAMS[team].cause]);
  }
  idp = await startIdentityProvider();
  receiver = await spawnReceiver(
    receiverEnv(db.url, {
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_ROLES: TEAM_ROLE_MAPPING,
      OIDC_SCOPES: 'openid email profile groups',
      OIDC_PROVIDER_NAME: 'Test IdP',
    }),
  );
  idp.register(`${receiver.managementUrl}/console/login/callback`);
  for (const team of TEAM_NAMES) {
    const worker = spawnWorker({ DATABASE_URL: db.url }, { entry: TEAM_WORKER, args: [team] });
    workers.push(worker);
    const state = await waitFor(
      () => (worker.child.exitCode !== null ? 'exited' : worker.output().includes('started') && 'started'),
      { timeout: 120_000, message: `the ${team} worker started` },
    );
    if (state === 'exited') throw new Error(`the ${team} worker exited: ${worker.output()}`);
  }
  const deliveries = [
    ...HEALTHY.map((id) => invoicePaid(id)),
    ...TEAM_NAMES.flatMap((team) => FAILING[team].map((id) => invoicePaid(id, team))),
  ];
  for (const delivery of deliveries) {
    const answer = await post(receiver.url, delivery);
    expect(answer.status, answer.body).toBe(200);
  }
  await settled([], "every event settled in every team's group");
  for (const team of TEAM_NAMES) {
    const created = await runCli(
      ['tokens', 'create', `${team}-ops`, '--role', 'operator', '--group', team, '--json'],
      { DATABASE_URL: db.url },
    );
    expect(created.code, created.stderr).toBe(0);
    tokens[team] = (JSON.parse(created.stdout) as { token: string }).token;
  }
});
afterAll(async () => {
  await browser?.close();
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(workers.map((worker) => worker.exited));
  await receiver?.stop();
  await idp?.stop();
  await pool?.end();
});

describe('the remote CLI with each team token', () => {
  for (const team of TEAM_NAMES) {
    it(`${team}: events --group ${team} --status failed lists exactly its failures, with its errors`, async () => {
      const asTeam = (args: string[]) =>
        runRemoteCli(args, { url: receiver.managementUrl, token: tokens[team]! });
      const listed = await asTeam(['events', '--group', team, '--status', 'failed', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const { events } = JSON.parse(listed.stdout) as {
        events: { eventId: string; status: string; lastError: string | null }[];
      };
      expect(events.map((e) => [e.eventId, e.status, e.lastError]).sort()).toEqual(
        FAILING[team].map((id) => [id, 'failed', `${TEAMS[team].effect}: ${TEAMS[team].cause}`]),
      );
      const table = await asTeam(['events', '--group', team, '--status', 'failed']);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain(TEAMS[team].cause);
      for (const other of TEAM_NAMES.filter((t) => t !== team)) {
        for (const text of [listed.stdout, table.stdout]) {
          expect(text).not.toContain(TEAMS[other].cause);
          expect(text).not.toContain(TEAMS[other].effect);
          for (const id of FAILING[other]) expect(text).not.toContain(id);
        }
      }
    });
  }
});

describe.runIf(requireChromium())('the console in Chromium', () => {
  beforeAll(async () => {
    browser = await launchChromium();
  });
  const consoleUrl = () => `${receiver.managementUrl}/console`;

  it("a viewer's pages hold no planted customer email; an operator's do", async () => {
    const viewer = await signInThroughProvider(browser!, consoleUrl(), 'vic');
    const paths = [
      '/',
      '/events',
      '/events?q=cus_ThreeTeams',
      '/dead?group=',
      '/failures',
      ...[...HEALTHY, ...FAILING.default].map((id) => `/event?provider=stripe&id=${id}`),
    ];
    for (const path of paths) {
      await viewer.goto(`${consoleUrl()}${path}`);
      expect(await viewer.content(), path).not.toContain(PLANTED_EMAIL);
    }
    // A viewer's search does not read subjects either; an operator's finds the customer's events.
    await viewer.goto(`${consoleUrl()}/events?q=cus_ThreeTeams`);
    expect(await viewer.locator('[data-total]').textContent()).toBe('0 events');
    const operator = await signInThroughProvider(browser!, consoleUrl(), TEAMS.default.login);
    await operator.goto(`${consoleUrl()}/events?q=cus_ThreeTeams`);
    expect(await operator.locator('[data-total]').textContent()).toMatch(/ of 8 events$/);
    await operator.goto(`${consoleUrl()}/event?provider=stripe&id=${FAILING.default[0]}`);
    expect(await operator.content()).toContain(PLANTED_EMAIL);
  });

  // One team after another: each replay is checked against what the teams not yet replayed still show.
  const replayed: TeamName[] = [];
  for (const team of TEAM_NAMES) {
    it(`${team}'s operator sees, filters and replays exactly its own failure group`, async () => {
      const { effect, cause, login } = TEAMS[team];
      const page = await signInThroughProvider(browser!, consoleUrl(), login);
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: 'Failures' })
        .click();
      await page.getByRole('heading', { name: /^Failures by cause/ }).waitFor();
      const body = (await page.locator('main').textContent()) ?? '';
      for (const other of TEAM_NAMES.filter((t) => t !== team)) {
        expect(body).not.toContain(TEAMS[other].effect);
        expect(body).not.toContain(TEAMS[other].cause);
      }
      await page.getByRole('link', { name: new RegExp(cause.split(' ')[0]!) }).click();
      await page.getByRole('heading', { name: `${effect} failing` }).waitFor();

      await page.getByRole('link', { name: /of its events/ }).click();
      await page.locator('[data-failure-filter]').waitFor();
      expect((await page.locator('table.events td.id a').allTextContents()).sort()).toEqual(FAILING[team]);
      await page.goBack();

      await page.getByRole('link', { name: 'Replay this group…' }).click();
      await page.getByRole('heading', { name: 'Bulk replay: dry run' }).waitFor();
      expect(await page.getByRole('status').first().textContent()).toMatch(/^\s*2 events received/);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.locator('[data-failure-filter]').waitFor();
      expect(await page.getByRole('status').first().textContent()).toMatch(/^\s*2 events received/);

      // The cause goes away, then the team replays: only its own effect runs again.
      await pool.query('delete from planted_causes where team = $1', [team]);
      const before = await effectsRan();
      await page.getByRole('button', { name: 'Replay all 2 events' }).click();
      await page.waitForURL(/\/operations\/\d+$/);
      const operation = Number(/\/operations\/(\d+)$/.exec(page.url())?.[1]);
      await waitFor(
        async () =>
          (
            await pool.query(`select 1 from replay_operations where id = $1 and status = 'completed'`, [
              operation,
            ])
          ).rowCount === 1,
        { timeout: 120_000, message: `${team}'s bulk replay completing` },
      );
      const { rows: events } = await pool.query<{ event_id: string }>(
        `select event_id from replay_operation_events where operation_id = $1 order by event_id`,
        [operation],
      );
      expect(events.map((row) => row.event_id)).toEqual(FAILING[team]);
      replayed.push(team);
      await settled(replayed, `${team}'s failures processed in its group, the others' unchanged`);

      const after = await effectsRan();
      const ours = (row: string) => FAILING[team].some((id) => row.includes(` ${id} `));
      expect(after.runs).toEqual([...before.runs, ...FAILING[team].map((id) => `${team} ${id} x1`)].sort());
      expect(after.ledger.filter((row) => !(row.startsWith(`${effect} `) && ours(row)))).toEqual(
        before.ledger.filter((row) => !(row.startsWith(`${effect} `) && ours(row))),
      );
      expect(after.ledger.filter((row) => row.startsWith(`${effect} `) && ours(row))).toEqual(
        FAILING[team].map((id) => `${effect} ${id} completed 2`),
      );
      const { rows: audited } = await pool.query<{ actor: string }>(
        `select actor from audit_log where action = 'bulk_replay_started' and target = $1`,
        [`replay operation ${operation}`],
      );
      expect(audited).toEqual([{ actor: `${login}@example.com` }]);
    });
  }
});
