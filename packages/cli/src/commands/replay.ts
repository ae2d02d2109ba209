import {
  createSenderBoss,
  ensureQueues,
  isEventStatus,
  ReplayError,
  replayEvent,
  replayEvents,
  type ReplayResult,
} from '@webhook-inbox/inbox';
import { createExampleInbox, type Mailer } from '@webhook-inbox/worker';
import type { CliContext } from '../context.ts';
import { sinceDate } from '../duration.ts';
import { NotFoundError, UsageError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';

export interface ReplayCliOptions {
  status?: string;
  provider?: string;
  type?: string;
  since?: string;
  forceEffect?: string;
  dryRun: boolean;
  json: boolean;
}

// The effect registry of this deployment (apps/worker), consulted only for effect names: it never sends mail.
const noMail: Mailer = {
  send: () => Promise.reject(new Error('the CLI sends no mail')),
  close: () => {},
};
const effects = createExampleInbox({ mailer: noMail, messageIdDomain: 'localhost' });

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
  if (!single && !options.status)
    throw new UsageError('replay needs <provider> <id>, or --status for a bulk replay');
  if (options.status && !isEventStatus(options.status))
    throw new UsageError(`--status ${options.status} is not a status`);
  if (!single && options.forceEffect)
    throw new UsageError('--force-effect applies to one event: replay <provider> <id>');

  const boss = createSenderBoss(context.databaseUrl(), { applicationName: 'webhook-inbox-cli' });
  await boss.start();
  try {
    await ensureQueues(boss);
    const deps = {
      pool: context.db().pool,
      boss,
      effectsFor: (p: string, t: string) => effects.effectsFor(p, t),
    };
    let results: ReplayResult[];
    try {
      results = single
        ? [await replayEvent(deps, provider, eventId ?? '', options)]
        : await replayEvents(
            deps,
            {
              status: options.status ?? '',
              provider: options.provider,
              type: options.type,
              since: options.since ? sinceDate(options.since) : undefined,
            },
            options,
          );
    } catch (error) {
      if (error instanceof ReplayError) {
        throw error.code === 'not_found' ? new NotFoundError(error.message) : new UsageError(error.message);
      }
      throw error;
    }
    report(results, options);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
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
