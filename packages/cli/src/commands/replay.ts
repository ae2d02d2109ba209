import { createSenderBoss } from '@webhook-inbox/inbox/boss';
import { replayEvents, type BulkReplayResult } from '@webhook-inbox/operator/bulk-replay';
import { loadEffectLookup } from '@webhook-inbox/inbox/effect-routes';
import { isEventStatus } from '@webhook-inbox/inbox/event-store';
import { DEFAULT_GROUP, ensureQueues, validateGroup } from '@webhook-inbox/inbox/queue';
import { ReplayError, replayEvent, type ReplayResult } from '@webhook-inbox/operator/replay';
import { shellArg } from '@webhook-inbox/operator/shell';
import { auditBulkReplay } from '@webhook-inbox/operator/audit';
import type { CliContext } from '../context.ts';
import { sinceDate } from '../duration.ts';
import { NotFoundError, UsageError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';
import { adminRequest, eventPath } from '../remote.ts';

export interface ReplayCliOptions {
  status?: string;
  provider?: string;
  type?: string;
  since?: string;
  group?: string;
  /** Bulk, with `fingerprint`: the events of one failure group (`failures` lists them). */
  effect?: string;
  fingerprint?: string;
  forceEffect?: string;
  /** Bulk: replay at most this many events (the rest are counted and reported). */
  limit?: string;
  dryRun: boolean;
  json: boolean;
  /** A remote receiver's admin API (remote.ts). */
  url?: string;
  token?: string;
}

/** Events a bulk replay reads per page. */
const CHUNK_SIZE = 200;

/** `replay <provider> <id>` or `replay --status failed [...]`: back on the queue; the ledger decides what runs. */
export async function replay(
  context: CliContext,
  provider: string | undefined,
  eventId: string | undefined,
  options: ReplayCliOptions,
): Promise<void> {
  const single = provider !== undefined;
  if (single && eventId === undefined)
    throw new UsageError('replay <provider> <id>: the event id is missing');
  if (single && options.status) throw new UsageError('give either <provider> <id> or --status, not both');
  const group = groupOf(options.group);
  if ((options.effect === undefined) !== (options.fingerprint === undefined))
    throw new UsageError('--effect and --fingerprint go together: a failure group (webhook-inbox failures)');
  const failure =
    options.effect !== undefined && options.fingerprint !== undefined
      ? { effect: options.effect, fingerprint: options.fingerprint }
      : undefined;
  if (single && failure)
    throw new UsageError('--effect and --fingerprint select events for a bulk replay, not <provider> <id>');
  if (!single && !options.status && !failure && group === DEFAULT_GROUP)
    throw new UsageError(
      'replay needs <provider> <id>, or --status, --group or --effect with --fingerprint for a bulk replay',
    );
  if (options.status && !isEventStatus(options.status))
    throw new UsageError(`--status ${options.status} is not a status`);
  if (!single && options.forceEffect)
    throw new UsageError('--force-effect applies to one event: replay <provider> <id>');
  if (single && options.limit !== undefined)
    throw new UsageError('--limit applies to a bulk replay (--status)');
  const limit = options.limit === undefined ? undefined : positiveInteger('--limit', options.limit);

  const api = context.adminApi(options);
  if (api) {
    if (single) {
      if (options.dryRun)
        throw new UsageError('against a remote receiver, replay <provider> <id> has no --dry-run');
      const body = { group, ...(options.forceEffect ? { forceEffect: options.forceEffect } : {}) };
      report(
        [await adminRequest<ReplayResult>(api, 'POST', `${eventPath(provider, eventId ?? '')}/replay`, body)],
        options,
      );
      return;
    }
    // The receiver replays and audits (as the token); its answer is the local replay's.
    const { filter } = bulkParameters(options, group, limit);
    const bulk = await adminRequest<BulkReplayResult>(api, 'POST', '/replay', {
      ...filter,
      ...(options.since === undefined ? {} : { since: sinceDate(options.since).toISOString() }),
      ...(limit === undefined ? {} : { limit }),
      dryRun: options.dryRun,
    });
    bulkReport(bulk, options, group);
    return;
  }
  // Each replay writes its audit row in its transaction, with this user at this host as actor.
  const auditAs = context.principal();
  const boss = createSenderBoss(context.databaseUrl(), { applicationName: 'webhook-inbox-cli' });
  await boss.start();
  try {
    await ensureQueues(boss, undefined, group);
    const pool = await context.pool();
    // The effects the group's worker recorded at its start (`effect_routes`): the team's own, whatever they are.
    const effectsFor = await loadEffectLookup(pool, group);
    if (!effectsFor && group !== DEFAULT_GROUP)
      throw new UsageError(
        `no worker of consumer group "${group}" has recorded its effects yet: start it first`,
      );
    const deps = { pool, boss, ...(effectsFor ? { effectsFor } : {}) };
    const progress = single ? undefined : progressLine();
    let bulk: BulkReplayResult;
    try {
      bulk = single
        ? {
            results: [await replayEvent(deps, provider, eventId ?? '', { ...options, group, auditAs })],
            total: 1,
            remaining: 0,
          }
        : await replayEvents(
            deps,
            {
              ...(options.status && isEventStatus(options.status) ? { status: options.status } : {}),
              provider: options.provider,
              type: options.type,
              since: options.since ? sinceDate(options.since) : undefined,
              failure,
            },
            {
              group,
              dryRun: options.dryRun,
              limit,
              chunkSize: CHUNK_SIZE,
              onProgress: progress?.update,
              auditAs,
            },
          );
    } catch (error) {
      if (error instanceof ReplayError) {
        throw error.code === 'not_found' ? new NotFoundError(error.message) : new UsageError(error.message);
      }
      throw error;
    } finally {
      progress?.end();
    }
    if (single) {
      report(bulk.results, options);
    } else {
      if (!options.dryRun) await auditBulkReplay(pool, auditAs, bulkParameters(options, group, limit), bulk);
      bulkReport(bulk, options, group);
    }
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

/** A bulk replay's filter as given (the group always) and its limit: what its audit row records. */
function bulkParameters(
  options: ReplayCliOptions,
  group: string,
  limit: number | undefined,
): { filter: Record<string, string | undefined> & { group: string }; limit: number | undefined } {
  const { status, provider, type, since, effect, fingerprint } = options;
  return { filter: { status, provider, type, since, group, effect, fingerprint }, limit };
}

/** A bulk replay's events, what its dry run selected (so the command that replays is it without --dry-run), its outcome. */
function bulkReport(bulk: BulkReplayResult, options: ReplayCliOptions, group: string): void {
  report(bulk.results, options);
  if (options.dryRun) {
    (options.json ? process.stderr : process.stdout).write(`filter: ${describeFilter(options, group)}\n`);
  }
  summary(bulk, options);
}

/** A bulk replay's filters as `--flag value` words: every one given, the group always. */
function describeFilter(options: ReplayCliOptions, group: string): string {
  const flags = ['status', 'provider', 'type', 'since', 'effect', 'fingerprint'] as const;
  const given = flags.flatMap((flag) =>
    options[flag] === undefined ? [] : [`--${flag} ${shellArg(options[flag])}`],
  );
  return [`--group ${group}`, ...given].join(' ');
}

function report(results: ReplayResult[], options: ReplayCliOptions): void {
  if (options.json) {
    printJson(results);
    return;
  }
  const verb = options.dryRun ? 'would run' : 'runs';
  printRows(
    results.map((r) => ({
      provider: r.provider,
      eventId: r.eventId,
      type: r.type,
      ...(r.group === DEFAULT_GROUP ? {} : { group: r.group }),
      was: r.previousStatus,
      [verb]:
        r.effects === null ? '(decided by the worker)' : r.effects.join(', ') || '(nothing left to run)',
      forced: r.forced ?? '',
      queued: r.enqueued ? 'yes' : 'no',
    })),
    false,
  );
  if (options.dryRun) process.stdout.write('dry run: nothing was changed\n');
}

/**
 * A bulk replay's outcome, never silent about what it left: on stdout for a person, on stderr with `--json`
 * (stdout stays the JSON array).
 */
function summary({ results, total, remaining }: BulkReplayResult, options: ReplayCliOptions): void {
  const verb = options.dryRun ? 'would replay' : 'replayed';
  const queued = results.filter((r) => r.enqueued).length;
  let line = `${verb} ${results.length} of ${total} matching events`;
  if (!options.dryRun) line += ` (${queued} queued, ${results.length - queued} with nothing left to run)`;
  if (remaining > 0) line += `; ${remaining} more remain (--limit stopped it: run it again or raise --limit)`;
  (options.json ? process.stderr : process.stdout).write(`${line}\n`);
}

/** Progress on a terminal (stderr, one line rewritten in place); nothing when stderr is a pipe or a file. */
function progressLine(): { update: (done: number, total: number) => void; end: () => void } | undefined {
  if (!process.stderr.isTTY) return undefined;
  let shown = false;
  return {
    update: (done, total) => {
      shown = true;
      process.stderr.write(`\rreplaying: ${done}/${total} events`);
    },
    end: () => {
      if (shown) process.stderr.write('\n');
    },
  };
}

function groupOf(group: string | undefined): string {
  try {
    return validateGroup(group ?? DEFAULT_GROUP);
  } catch (error) {
    throw new UsageError(`--group: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function positiveInteger(flag: string, value: string): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1)
    throw new UsageError(`${flag} ${value} is not a whole number from 1`);
  return Number(value);
}
