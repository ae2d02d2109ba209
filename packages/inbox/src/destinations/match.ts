import type { BodyFilter, Destination, EventSelector } from './config.ts';

/** What matching reads of an event: its source, type and body (integers past 2^53 as `bigint`). */
export interface MatchableEvent {
  provider: string;
  type: string;
  payload: unknown;
}

/** Whether `destination` receives `event`: one of its selectors matches, and its body filter holds. */
export function matches(destination: Pick<Destination, 'events' | 'filter'>, event: MatchableEvent): boolean {
  if (!destination.events.some((selector) => selects(selector, event))) return false;
  return destination.filter === undefined || holds(destination.filter, event.payload);
}

function selects(selector: EventSelector, event: MatchableEvent): boolean {
  if (selector.source !== '*' && selector.source !== event.provider) return false;
  return selector.types.some((type) => wildcard(type).test(event.type));
}

const patterns = new Map<string, RegExp>();

/** `*` matches any run of characters (dots included); everything else is literal. */
export function wildcard(pattern: string): RegExp {
  let regex = patterns.get(pattern);
  if (!regex) {
    const body = pattern
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    regex = new RegExp(`^${body}$`, 's');
    patterns.set(pattern, regex);
  }
  return regex;
}

function holds(filter: BodyFilter, payload: unknown): boolean {
  const found = resolvePointer(payload, filter.pointer);
  if ('exists' in filter) return found.exists === filter.exists;
  return found.exists && sameJson(found.value, filter.equals);
}

/** RFC 6901: `""` is the whole body; `~1` is `/`, `~0` is `~`. */
export function resolvePointer(document: unknown, pointer: string): { exists: boolean; value?: unknown } {
  if (pointer === '') return { exists: true, value: document };
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= current.length) return { exists: false };
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { exists: false };
    }
  }
  return { exists: true, value: current };
}

/** JSON equality; a number and a `bigint` are equal when they are the same integer. */
function sameJson(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return String(a) === String(b);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keysA = Object.keys(a);
    return (
      keysA.length === Object.keys(b).length &&
      keysA.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
    );
  }
  return a === b;
}
