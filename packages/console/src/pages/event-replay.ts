import { ReplayError, replayEvent, type ReplayDeps, type ReplayResult } from '@webhook-inbox/operator/replay';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices } from '../context.ts';
import { ConsoleError } from '../errors.ts';
import { actionGroup, visibleEvent } from '../scope.ts';
import { DEFAULT_GROUP, ensureQueues } from '@webhook-inbox/inbox/queue';
import { eventHref, searchParams } from '../views/format.ts';

/** The replay dependencies of the console's replays: its pool and pg-boss, the group's effects (default's unless named). */
export async function replayDeps(services: ConsoleServices, group?: string): Promise<ReplayDeps> {
  const effectsFor = await services.effectsFor(group);
  return { pool: services.pool, boss: services.boss, ...(effectsFor ? { effectsFor } : {}) };
}

async function formKey(
  c: ConsoleContext,
): Promise<{ provider: string; eventId: string; force: string; group: string }> {
  const form = await c.req.parseBody();
  const text = (key: string) => (typeof form[key] === 'string' ? form[key] : '');
  if (!text('provider') || !text('id'))
    throw new ConsoleError('invalid_input', 'provider and id are required');
  const group = actionGroup(c, text('group'));
  if (text('force') && group !== DEFAULT_GROUP) {
    throw new ConsoleError('invalid_input', "forcing a completed effect is the default group's");
  }
  return { provider: text('provider'), eventId: text('id'), force: text('force'), group };
}

/**
 * The event page's action: replays the event (its unfinished effects, or one completed effect forced), audited in
 * its transaction, and goes back to the event page with what was queued.
 */
export function eventReplayAction(app: ConsoleApp, services: ConsoleServices): void {
  app.post('/event/replay', async (c) => {
    const { provider, eventId, force, group } = await formKey(c);
    // The replay writes its audit row in its own transaction, as the signed-in operator.
    const auditAs = c.get('principal');
    await visibleEvent(services, auditAs, provider, eventId);
    if (group !== DEFAULT_GROUP) await ensureQueues(services.boss, undefined, group);
    const result = await replayOrRefuse(async () =>
      replayEvent(await replayDeps(services, group), provider, eventId, {
        auditAs,
        group,
        ...(force ? { forceEffect: force } : {}),
      }),
    );
    services.logger.info(
      {
        provider,
        eventId,
        group,
        forced: result.forced,
        enqueued: result.enqueued,
        who: c.get('session').who,
      },
      'console replay',
    );
    const where = group === DEFAULT_GROUP ? '' : ` in ${group}`;
    const message = result.enqueued
      ? `Replay queued${where}: ${result.effects ? result.effects.join(', ') : 'the unfinished effects'} will run.`
      : `Nothing to replay${where}: every effect has completed.`;
    return c.redirect(
      `${eventHref(services.base, provider, eventId)}&${searchParams({ replayed: message })}`,
      303,
    );
  });
}

/** A refused replay as the console's error (404 for an unknown event, 400 for an unknown effect). */
export async function replayOrRefuse(fn: () => Promise<ReplayResult>): Promise<ReplayResult> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ReplayError) {
      throw new ConsoleError(error.code === 'not_found' ? 'not_found' : 'unknown_effect', error.message);
    }
    throw error;
  }
}
