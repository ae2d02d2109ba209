import { loadEffectLookup } from '@webhook-inbox/inbox/effect-routes';
import { DEFAULT_GROUP, ensureQueues } from '@webhook-inbox/inbox/queue';
import { coversGroup, type Principal } from '@webhook-inbox/operator/access/roles';
import type { ReplayDeps } from '@webhook-inbox/operator/replay';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { AdminError } from '../http/errors.ts';

/** Refuses (403 `forbidden`) a consumer group outside the principal's groups. */
export function requireGroup(principal: Principal, group: string): void {
  if (!coversGroup(principal, group)) {
    throw new AdminError(
      'forbidden',
      `you are limited to consumer groups ${principal.groups?.join(', ')}: not "${group}"`,
    );
  }
}

/**
 * The consumer group a read is about: the one asked for (403 `forbidden` outside the principal's groups), else the
 * default group for a principal that has it, else a principal's only group; a principal of several groups without
 * the default one names one (400 `group_required`), so no field of another team's is ever the answer's own.
 */
export function groupFor(principal: Principal, requested: string | undefined): string {
  if (requested !== undefined) {
    requireGroup(principal, requested);
    return requested;
  }
  if (coversGroup(principal, DEFAULT_GROUP)) return DEFAULT_GROUP;
  const [only, ...more] = principal.groups ?? [];
  if (only !== undefined && more.length === 0) return only;
  throw new AdminError(
    'group_required',
    `you are limited to consumer groups ${principal.groups?.join(', ')}: name one with group=`,
  );
}

/**
 * What a replay in `group` needs: the effects its worker recorded (read per request: the CLI's lookup, so both
 * replay alike) and its queues. Another group than the default whose worker never started is refused (400
 * `invalid_request`): nothing would run its effects.
 */
export async function groupReplayDeps(pool: pg.Pool, boss: PgBoss, group: string): Promise<ReplayDeps> {
  const effectsFor = await loadEffectLookup(pool, group);
  if (!effectsFor && group !== DEFAULT_GROUP) {
    throw new AdminError(
      'invalid_request',
      `no worker of consumer group "${group}" has recorded its effects yet: start it first`,
    );
  }
  // Its worker created them before recording its routes; a replay does not depend on that.
  if (group !== DEFAULT_GROUP) await ensureQueues(boss, undefined, group);
  return { pool, boss, ...(effectsFor ? { effectsFor } : {}) };
}
