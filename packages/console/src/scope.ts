import { DEFAULT_GROUP } from '@webhook-inbox/inbox/queue';
import { effectRoutes } from '@webhook-inbox/inbox/sql';
import { coversGroup, type Principal } from '@webhook-inbox/operator/access/roles';
import { getCookie, setCookie } from 'hono/cookie';
import { isHttps } from './auth/middleware.ts';
import type { ConsoleContext, ConsoleServices } from './context.ts';
import { read } from './db.ts';
import { ConsoleError } from './errors.ts';

/** Where the console remembers the consumer group an operator chose (`?group=`), for the pages' next visits. */
export const GROUP_COOKIE = 'wi_console_group';

/**
 * Which consumer groups a page shows: the one chosen in the selector (`?group=billing`, remembered in a cookie), or
 * every group the principal may see (`?group=`, "all groups"). A principal limited to groups (`OIDC_ROLES`'
 * `role@group`) chooses among its own only; the pages read nothing of the others, counts included.
 */
export interface GroupScope {
  /** The chosen group; `null`: all of `choices`. */
  selected: string | null;
  /** The groups the principal may see, of those that recorded routes (and the default group): the selector's. */
  choices: readonly string[];
  /** The principal's own limit; `null`: every group. */
  limit: readonly string[] | null;
}

/** The groups the scope covers: the chosen one, or every choice. */
export function coveredGroups(scope: GroupScope): readonly string[] {
  return scope.selected === null ? scope.choices : [scope.selected];
}

/**
 * The groups whose rows a record of actions shows (the bulk replays, the audit log): undefined for every row, of a
 * group or of none (a principal of every group over all groups), else the covered groups'.
 */
export function recordGroups(scope: GroupScope): readonly string[] | undefined {
  return scope.limit === null && scope.selected === null ? undefined : coveredGroups(scope);
}

/** True when the scope shows `group`'s events and effects. */
export function inScope(scope: GroupScope, group: string): boolean {
  return coveredGroups(scope).includes(group);
}

/**
 * The request's scope. An unknown group in the query (or one the principal is not limited to: the answer does not
 * tell which) is refused with 400 `unknown_group`; a remembered one that is gone falls back to all groups. With
 * `remember: false` (the records of actions: bulk replays, the audit log) only the query chooses, and the choice is
 * not remembered: those pages open on all groups, sign-ins and purges included for a principal of every group.
 */
export async function groupScope(
  c: ConsoleContext,
  services: ConsoleServices,
  { remember = true }: { remember?: boolean } = {},
): Promise<GroupScope> {
  const principal = c.get('principal');
  const choices = await groupChoices(c, services);
  const asked = c.req.query('group');
  const base = { choices, limit: principal.groups };
  if (asked === undefined) {
    if (!remember) return { ...base, selected: null };
    const remembered = getCookie(c, GROUP_COOKIE);
    return { ...base, selected: remembered && choices.includes(remembered) ? remembered : null };
  }
  const selected = asked.trim() || null;
  if (selected !== null && !choices.includes(selected)) {
    throw new ConsoleError(
      'unknown_group',
      `no consumer group "${selected.slice(0, 40)}" here: choose one of ${choices.join(', ')}`,
      { field: 'group' },
    );
  }
  if (!remember) return { ...base, selected };
  setCookie(c, GROUP_COOKIE, selected ?? '', {
    httpOnly: true,
    sameSite: 'Strict',
    secure: isHttps(c, services.trustedProxies),
    path: services.base || '/',
  });
  return { ...base, selected };
}

/** The groups the principal may see, of those that recorded routes (and the default group), by name. */
export async function groupChoices(c: ConsoleContext, services: ConsoleServices): Promise<string[]> {
  const recorded = await read<{ group: string }>(
    services.pool,
    effectRoutes.selectGroupNames(),
    services.queryTimeoutMs,
  );
  const known = [...new Set([DEFAULT_GROUP, ...recorded.map((row) => row.group)])].sort();
  return known.filter((group) => coversGroup(c.get('principal'), group));
}

/**
 * A single group an action names (a replay's `group` field; absent: the default group), refused with 400
 * `unknown_group` when the principal may not act on it.
 */
export function actionGroup(c: ConsoleContext, given: string | undefined): string {
  const group = given?.trim() || DEFAULT_GROUP;
  if (!coversGroup(c.get('principal'), group)) {
    throw new ConsoleError('unknown_group', `no consumer group "${group.slice(0, 40)}" here`, {
      field: 'group',
    });
  }
  return group;
}

/**
 * Refuses (404, as for an event that is not there) an event a principal limited to groups may not see: one of a
 * type none of its groups has effects for.
 */
export async function visibleEvent(
  services: ConsoleServices,
  principal: Principal,
  provider: string,
  eventId: string,
): Promise<void> {
  if (principal.groups === null) return;
  const [row] = await read<{ visible: boolean }>(
    services.pool,
    effectRoutes.selectEventVisible(provider, eventId, principal.groups),
    services.queryTimeoutMs,
  );
  if (!row?.visible) throw new ConsoleError('not_found', `no ${provider} event ${eventId}`);
}
