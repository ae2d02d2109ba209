/**
 * What the console's overview, failures and bulk replay pages show, from a shell: `stats`, `failures`,
 * `operations`.
 */
import { readInboxStats, type InboxStats } from '@webhook-inbox/operator/inbox-stats';
import { failureGroups, replayOperations } from '@webhook-inbox/operator/sql';
import type { CliContext } from '../context.ts';
import { NotFoundError, UsageError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';
import { adminRequest } from '../remote.ts';

export interface StatsOptions {
  json: boolean;
  /** One consumer group's part: its events per status, its queues' jobs. */
  group?: string;
  /** A remote receiver's admin API (remote.ts). */
  url?: string;
  token?: string;
}

/**
 * The backlog and what is stuck: events per unfinished status, per consumer group, live jobs per queue; with
 * `--group`, that group's part. Remotely, what the token's groups may see (`GET /admin/stats`).
 */
export async function stats(context: CliContext, options: StatsOptions): Promise<void> {
  const api = context.adminApi(options);
  const query =
    options.group === undefined ? '' : `?${new URLSearchParams({ group: options.group }).toString()}`;
  const result = api
    ? await adminRequest<InboxStats>(api, 'GET', `/stats${query}`)
    : await readInboxStats(await context.pool(), { group: options.group });
  if (options.json) {
    printJson(result);
    return;
  }
  process.stdout.write(`events (${result.group ?? 'default'} group):\n`);
  printRows(
    Object.entries(result.events).map(([status, count]) => ({ status, count })),
    false,
  );
  process.stdout.write(`oldest unprocessed: ${result.oldestUnprocessedAgeSeconds} s\n\nconsumer groups:\n`);
  printRows(result.groups, false, ['group', 'status', 'count']);
  process.stdout.write('\nqueue jobs:\n');
  printRows(result.jobs, false, ['queue', 'state', 'count']);
}

export interface FailuresOptions {
  group?: string;
  effect?: string;
  /** `unresolved` (open and acknowledged), `open`, `acknowledged`, `resolved`, `all`. */
  state: string;
  json: boolean;
}

const STATES = ['unresolved', 'open', 'acknowledged', 'resolved', 'all'];

/** The failure groups, the most events first: the console's failures page. */
export async function failures(context: CliContext, options: FailuresOptions): Promise<void> {
  if (!STATES.includes(options.state)) throw new UsageError(`--state must be one of ${STATES.join(', ')}`);
  const { rows } = await (
    await context.pool()
  ).query<failureGroups.FailureGroupRow>(failureGroups.selectFailureGroups());
  const shown = rows.filter(
    (row) =>
      (!options.group || row.group === options.group) &&
      (!options.effect || row.effect === options.effect) &&
      (options.state === 'all' ||
        (options.state === 'unresolved' ? row.state !== 'resolved' : row.state === options.state)),
  );
  if (options.json) {
    printJson(shown);
    return;
  }
  printRows(
    shown.map((row) => ({ ...row, example: row.example.join(' ') })),
    false,
    ['group', 'effect', 'events', 'dead', 'lastSeen', 'state', 'fingerprint', 'example'],
  );
}

/** The console's bulk replays, newest first, each with where its replayed events are now; or one of them. */
export async function operations(
  context: CliContext,
  id: string | undefined,
  options: { json: boolean },
): Promise<void> {
  const pool = await context.pool();
  const { rows: list } = await pool.query<{
    id: number | string;
    status: string;
    total: number;
    done: number;
  }>(id === undefined ? replayOperations.listOperations(50) : replayOperations.getOperation(Number(id)));
  if (id !== undefined && list.length === 0) throw new NotFoundError(`no bulk replay ${id}`);
  const { rows: outcomes } = await pool.query<replayOperations.OutcomeRow>(
    replayOperations.selectOutcomes(list.map((o) => Number(o.id))),
  );
  const byId = new Map(outcomes.map((o) => [String(o.id), o]));
  const rows = list.map((o) => {
    const outcome = byId.get(String(o.id));
    return {
      ...o,
      processed: outcome?.processed ?? 0,
      failing: outcome?.failing ?? 0,
      dead: outcome?.dead ?? 0,
      gone: outcome?.gone ?? 0,
    };
  });
  if (options.json) {
    printJson(rows);
    return;
  }
  printRows(rows, false, [
    'id',
    'status',
    'done',
    'total',
    'processed',
    'failing',
    'dead',
    'createdBy',
    'createdAt',
  ]);
}
