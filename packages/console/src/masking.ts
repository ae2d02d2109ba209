import type { EventFilter } from '@webhook-inbox/inbox/event-store';
import type { ConsoleContext, ConsoleServices } from './context.ts';
import { coveredGroups, type GroupScope } from './scope.ts';

/**
 * What a masked role sees of the people and errors behind events: the roles of `maskedRoles` (`viewer` unless
 * configured, `CONSOLE_MASKED_ROLES`) see no subject (a customer's id and email) and no error text as recorded,
 * as they see no payload, and cannot search subjects. Failure groups' fingerprints stay: ids, numbers and emails
 * are replaced in them.
 */
export const MASKED = '(masked)';

/** True when the request's role sees subjects and error texts masked. */
export function masked(c: ConsoleContext, services: ConsoleServices): boolean {
  return services.maskedRoles.includes(c.get('principal').role);
}

/** `text` as the request's role may see it: itself, or `MASKED` when there is something to hide. */
export function maskText<T extends string | null | undefined>(
  c: ConsoleContext,
  services: ConsoleServices,
  text: T,
): T | typeof MASKED {
  return text && masked(c, services) ? MASKED : text;
}

/** A row's subject and last error, masked for a masked role. */
export function maskRow<T extends { subject?: string | null; lastError?: string | null }>(
  c: ConsoleContext,
  services: ConsoleServices,
  row: T,
): T {
  if (!masked(c, services)) return row;
  return {
    ...row,
    ...(row.subject ? { subject: MASKED } : {}),
    ...(row.lastError ? { lastError: MASKED } : {}),
  };
}

/**
 * `filter` narrowed to the scope: its group's events (and status), or, over all groups, events whose status is
 * the asked one in any covered group; a limited principal's to its groups' types. A masked role's search does not
 * look in subjects.
 */
export function scopedFilter(scope: GroupScope, filter: EventFilter, isMasked: boolean): EventFilter {
  const scoped: EventFilter = { ...filter };
  if (isMasked) scoped.searchSubjects = false;
  if (scope.limit) scoped.visibleTo = coveredGroups(scope);
  if (scope.selected !== null) scoped.group = scope.selected;
  else scoped.statusInAny = scope.limit ?? 'all';
  return scoped;
}
