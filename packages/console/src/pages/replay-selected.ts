import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import type { EventFilter } from '@webhook-inbox/inbox/event-store';
import { GROUP_NAME_RULE, isGroupName } from '@webhook-inbox/inbox/queue';
import { eventFilter } from '@webhook-inbox/inbox/sql';
import { replayOperations } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { audit, type ConsoleContext, type ConsoleServices } from '../context.ts';
import { read, run } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { parseKeys, type EventKeyPair } from '../filter.ts';
import { actionGroup } from '../scope.ts';
import { count } from '../views/format.ts';
import { csrfField, type Html } from '../views/layout.ts';

/** The most events one selection replays: the longest list page shows 100 rows. */
const MAX_SELECTED = 100;
/** The id of the form the rows' checkboxes belong to (`form=` on each box). */
const SELECTION_FORM = 'replay-selected';
const SHOWN_UNKNOWN = 5;

/**
 * The events list's and the dead letters' "Replay selected": one bulk replay operation over exactly the events
 * whose boxes are ticked (in the list's consumer group), run by the operations runner as any bulk replay, audited
 * as one. Bad input (nothing ticked, too many, an event that is not there) is a 400 `invalid_input` the list
 * shows above its rows.
 */
export async function replaySelected(
  c: ConsoleContext,
  services: ConsoleServices,
  list: (c: ConsoleContext, refusal: ConsoleError) => Promise<Response>,
): Promise<Response> {
  try {
    return await startSelected(c, services);
  } catch (error) {
    // A browser gets the list with the refusal above it; htmx and scripts the JSON refusal, as from every page.
    if (!(error instanceof ConsoleError) || error.code !== 'invalid_input') throw error;
    if (c.req.header('hx-request') === 'true' || !c.req.header('accept')?.includes('text/html')) throw error;
    return list(c, error);
  }
}

async function startSelected(c: ConsoleContext, services: ConsoleServices): Promise<Response> {
  const body = await c.req.parseBody({ all: true });
  const group = typeof body.group === 'string' && body.group ? body.group : DEFAULT_GROUP;
  if (!isGroupName(group)) throw new ConsoleError('invalid_input', `group: ${GROUP_NAME_RULE}`);
  actionGroup(c, group);
  const keys = chosenKeys(body.event);
  if (group !== DEFAULT_GROUP && !(await services.effectsFor(group))) {
    throw new ConsoleError(
      'invalid_input',
      `no worker of consumer group "${group}" has recorded its effects yet: start it first`,
    );
  }
  const filter: EventFilter & { keys: EventKeyPair[] } = {
    keys,
    ...(group === DEFAULT_GROUP ? {} : { group }),
  };
  const [counted] = await read<{ n: number; upTo: string }>(
    services.pool,
    eventFilter.countEvents(filter, null),
    services.queryTimeoutMs,
  );
  const total = counted?.n ?? 0;
  const upTo = counted?.upTo ?? services.now().toISOString();
  if (total < keys.length) throw await unknownKeys(services, filter, upTo, group);
  const stored = { ...(group === DEFAULT_GROUP ? {} : { group }), keys };
  const [operation] = await run<{ id: number }>(
    services.pool,
    replayOperations.insertOperation(stored, upTo, total, c.get('session').who),
  );
  if (!operation) throw new Error('insert into replay_operations returned no row');
  await audit(
    services,
    c,
    'bulk_replay_started',
    `replay operation ${operation.id}`,
    {
      filter: stored,
      receivedUpTo: upTo,
      total,
    },
    group,
  );
  services.wakeRunner();
  return c.redirect(`${services.base}/operations/${operation.id}`, 303);
}

/** The ticked boxes' events, each `["provider","event id"]` as the list wrote it, without repeats, by key. */
function chosenKeys(values: unknown): EventKeyPair[] {
  const given = (Array.isArray(values) ? values : values === undefined ? [] : [values]).filter(
    (value): value is string => typeof value === 'string',
  );
  if (given.length === 0) {
    throw new ConsoleError('invalid_input', 'no event chosen: tick the box of each event to replay');
  }
  if (given.length > MAX_SELECTED) {
    throw new ConsoleError(
      'invalid_input',
      `${count(given.length)} events chosen: at most ${MAX_SELECTED} are replayed at once; for more, use "Bulk replay these events…" with a filter`,
    );
  }
  let keys: EventKeyPair[];
  try {
    keys = parseKeys(given.map((value) => JSON.parse(value) as unknown));
  } catch (error) {
    throw new ConsoleError('invalid_input', 'a chosen event is not one this list gave', { cause: error });
  }
  const seen = new Map(keys.map((key) => [JSON.stringify(key), key]));
  // In key order, whatever the list's: the operation's page names them so.
  return [...seen.values()].sort(([p1, e1], [p2, e2]) => (p1 === p2 ? compare(e1, e2) : compare(p1, p2)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The refusal naming the chosen events that are not there (purged, or not of the group's types). */
async function unknownKeys(
  services: ConsoleServices,
  filter: EventFilter & { keys: EventKeyPair[] },
  upTo: string,
  group: string,
): Promise<ConsoleError> {
  const found = await read<{ provider: string; eventId: string }>(
    services.pool,
    eventFilter.nextEvents(filter, upTo, filter.keys.length, null),
    services.queryTimeoutMs,
  );
  const known = new Set(found.map((row) => JSON.stringify([row.provider, row.eventId])));
  const missing = filter.keys.filter((key) => !known.has(JSON.stringify(key)));
  const named = missing.slice(0, SHOWN_UNKNOWN).map(([provider, eventId]) => `${provider} ${eventId}`);
  const more = missing.length > SHOWN_UNKNOWN ? ` and ${missing.length - SHOWN_UNKNOWN} more` : '';
  const where = group === DEFAULT_GROUP ? '' : ` of consumer group "${group}"`;
  return new ConsoleError(
    'invalid_input',
    `${missing.length} of the ${filter.keys.length} chosen events ${missing.length === 1 ? 'is' : 'are'} not an event${where} (purged, or never received): ${named.join(', ')}${more}. Nothing was replayed.`,
  );
}

/** The form the list's checkboxes post with: the list's own address, so a refusal shows the same list. */
export function selectionForm(action: string, csrf: string, group: string): Html {
  return html`<form id="${SELECTION_FORM}" method="post" action="${action}" class="inline selection">
    ${csrfField(csrf)} ${group ? html`<input type="hidden" name="group" value="${group}" />` : ''}
    <button type="submit">Replay selected</button>
    <strong data-selected-count aria-live="polite"></strong>
    <span class="hint">Tick events below (at most ${MAX_SELECTED}): one bulk replay of exactly those.</span>
  </form>`;
}

/** The list's address, its query included: where its selection form posts. */
export function listAddress(c: ConsoleContext): string {
  const url = new URL(c.req.url);
  return url.pathname + url.search;
}

/** A refused selection, above the list. */
export function refusalAlert(refusal: ConsoleError | undefined): Html {
  return refusal
    ? html`<p class="error" role="alert" data-code="${refusal.code}">${refusal.message}</p>`
    : html``;
}

/** A row's checkbox, in the selection form. */
export function selectionBox(provider: string, eventId: string): Html {
  return html`<input
    type="checkbox"
    name="event"
    value="${JSON.stringify([provider, eventId])}"
    form="${SELECTION_FORM}"
    aria-label="Select ${provider} ${eventId}"
  />`;
}
