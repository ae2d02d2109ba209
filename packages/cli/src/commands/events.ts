import {
  getEvent,
  InvalidFilterError,
  isEventStatus,
  listEvents,
  type EventFilters,
  type EventDetail,
  type EventPage,
} from '@webhook-inbox/inbox';
import type { CliContext } from '../context.ts';
import { NotFoundError, UsageError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';
import { sinceDate } from '../duration.ts';
import { adminRequest, eventPath, type AdminApi } from '../remote.ts';

export interface EventsOptions {
  provider?: string;
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
  if (options.json) {
    printJson(page);
    return;
  }
  printRows(page.events as unknown as Record<string, unknown>[], false, [
    'receivedAt',
    'provider',
    'eventId',
    'type',
    'subject',
    'status',
    'attempts',
    'lastError',
  ]);
  if (page.nextCursor) process.stdout.write(`more: --cursor ${page.nextCursor}\n`);
}

/** The admin API's page for the same filters (the receiver parses `--since` as the CLI does). */
function remoteEvents(api: AdminApi, options: EventsOptions): Promise<EventPage> {
  const query = new URLSearchParams({ limit: String(options.limit) });
  for (const key of ['provider', 'status', 'type', 'since', 'cursor'] as const) {
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
      search: options.search,
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
  options: { json: boolean; url?: string; token?: string },
): Promise<void> {
  const json = options.json;
  const api = context.adminApi(options);
  const event = api
    ? await adminRequest<EventDetail>(api, 'GET', eventPath(provider, eventId))
    : await getEvent(await context.pool(), provider, eventId);
  if (!event) throw new NotFoundError(`no ${provider} event ${eventId}`);
  if (json) {
    printJson(event);
    return;
  }
  const { effects, groups, payload, headers, ...summary } = event;
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
  if (groups.length > 0) {
    // `status` above is the default group's; these are the other groups that have the event.
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
