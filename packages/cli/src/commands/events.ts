import { caselessIdProviders } from '@webhook-inbox/providers/subject';
import {
  getEvent,
  InvalidFilterError,
  isEventStatus,
  listEvents,
  type EventFilters,
  type EventPage,
  type GroupEventDetail,
} from '@webhook-inbox/inbox/event-store';
import { webhookEventGroups } from '@webhook-inbox/inbox/sql';
import type { CliContext } from '../context.ts';
import { NotFoundError, UsageError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';
import { sinceDate } from '../duration.ts';
import { adminRequest, eventPath, type AdminApi } from '../remote.ts';

export interface EventsOptions {
  provider?: string;
  /** A consumer group: its events (the types it has effects for) and `status` in it. */
  group?: string;
  status?: string;
  type?: string;
  since?: string;
  search?: string;
  limit: number;
  cursor?: string;
  json: boolean;
  /** A remote receiver's admin API (remote.ts). */
  url?: string;
  token?: string;
}

export async function events(context: CliContext, options: EventsOptions): Promise<void> {
  if (options.status && !isEventStatus(options.status)) {
    throw new UsageError(`--status must be one of received, processing, processed, failed, dead`);
  }
  const api = context.adminApi(options);
  const page = api ? await remoteEvents(api, options) : await localEvents(context, options);
  // Each event's status in the other consumer groups that have it and the reader may see (`billing:dead`).
  const listed = page.events.map(({ group: _group, groups, ...event }) => ({
    ...event,
    groups: groups.map((row) => `${row.group}:${row.status}`),
  }));
  if (options.json) {
    printJson({ ...page, events: listed });
    return;
  }
  printRows(
    listed.map((event) => ({ ...event, groups: event.groups.join(' ') })),
    false,
    ['receivedAt', 'provider', 'eventId', 'type', 'subject', 'status', 'groups', 'attempts', 'lastError'],
  );
  if (page.nextCursor) process.stdout.write(`more: --cursor ${page.nextCursor}\n`);
  if (options.status && !options.group && !api) {
    // `status` is the default group's: say where else events are in that status.
    const { rows } = await (
      await context.pool()
    ).query<{ group: string; status: string; n: number }>(webhookEventGroups.countUnfinishedByGroup());
    for (const row of rows.filter((r) => r.status === options.status)) {
      process.stdout.write(
        `consumer group ${row.group}: ${row.n} ${row.status} (webhook-inbox events --group ${row.group} --status ${row.status})\n`,
      );
    }
  }
}

/** The admin API's page for the same filters (the receiver parses `--since` as the CLI does). */
function remoteEvents(api: AdminApi, options: EventsOptions): Promise<EventPage> {
  const query = new URLSearchParams({ limit: String(options.limit) });
  for (const key of ['provider', 'group', 'status', 'type', 'since', 'cursor'] as const) {
    const value = options[key];
    if (value !== undefined) query.set(key, value);
  }
  if (options.search !== undefined) query.set('q', options.search);
  return adminRequest<EventPage>(api, 'GET', `/events?${query.toString()}`);
}

async function localEvents(context: CliContext, options: EventsOptions): Promise<EventPage> {
  try {
    return await listEvents(await context.pool(), {
      provider: options.provider,
      status: options.status as EventFilters['status'],
      type: options.type,
      group: options.group,
      search: options.search,
      // A renamed source of a caseless type (`github-acme`) is searched as the receiver searches it.
      caselessIdProviders:
        options.search === undefined ? undefined : caselessIdProviders(await context.sources()),
      since: options.since ? sinceDate(options.since) : undefined,
      limit: options.limit,
      cursor: options.cursor,
    });
  } catch (error) {
    // A filter the event log refuses (--limit 501, a cursor not from a previous page) is wrong usage, exit 2.
    if (error instanceof InvalidFilterError) throw new UsageError(`--${error.field}: ${error.message}`);
    throw error;
  }
}

export async function show(
  context: CliContext,
  provider: string,
  eventId: string,
  options: { json: boolean; group?: string; url?: string; token?: string },
): Promise<void> {
  const json = options.json;
  const api = context.adminApi(options);
  const query =
    options.group === undefined ? '' : `?${new URLSearchParams({ group: options.group }).toString()}`;
  const event = api
    ? await adminRequest<GroupEventDetail>(api, 'GET', `${eventPath(provider, eventId)}${query}`)
    : await getEvent(await context.pool(), provider, eventId, {
        group: options.group,
        ...(options.group === undefined ? {} : { visibleTo: [options.group] }),
      });
  if (!event) throw new NotFoundError(`no ${provider} event ${eventId}`);
  if (json) {
    printJson(event);
    return;
  }
  const { effects, attemptHistory: attempts, groups, completedBy, payload, headers, ...summary } = event;
  for (const [key, value] of Object.entries(summary)) {
    process.stdout.write(
      `${key.padEnd(12)} ${value instanceof Date ? value.toISOString() : String(value ?? '')}\n`,
    );
  }
  process.stdout.write(`headers      ${JSON.stringify(headers)}\n\neffects:\n`);
  printRows(effects as unknown as Record<string, unknown>[], false, [
    'effect',
    'status',
    'attempts',
    'lastError',
    'completedAt',
    'forcedAt',
  ]);
  if (completedBy.length > 0) {
    // Completed here in no attempt: another event of the effect's scope ran it.
    process.stdout.write(`\ncompleted by another event:\n`);
    printRows(completedBy as unknown as Record<string, unknown>[], false, [
      'effect',
      'provider',
      'eventId',
      'completedAt',
    ]);
  }
  if (attempts.length > 0) {
    process.stdout.write(`\nattempts:\n`);
    printRows(attempts as unknown as Record<string, unknown>[], false, [
      'effect',
      'attempt',
      'startedAt',
      'durationMs',
      'outcome',
      'error',
      'worker',
      'jobId',
    ]);
  }
  if (groups.length > 0) {
    // `status` above is `group`'s; these are the other groups that have the event.
    process.stdout.write(`\nconsumer groups:\n`);
    printRows(groups as unknown as Record<string, unknown>[], false, [
      'group',
      'status',
      'attempts',
      'lastError',
      'processedAt',
    ]);
  }
  process.stdout.write(`\npayload:\n`);
  printJson(payload);
}
