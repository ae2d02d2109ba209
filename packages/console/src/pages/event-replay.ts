import { ReplayError, replayEvent, type ReplayDeps, type ReplayResult } from '@webhook-inbox/operator/replay';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices } from '../context.ts';
import { ConsoleError } from '../errors.ts';
import { eventHref, searchParams } from '../views/format.ts';

/** The replay dependencies of the console's replays: its pool and pg-boss, the default group's effects. */
export async function replayDeps(services: ConsoleServices): Promise<ReplayDeps> {
  const effectsFor = await services.effectsFor();
  return { pool: services.pool, boss: services.boss, ...(effectsFor ? { effectsFor } : {}) };
}

async function formKey(c: ConsoleContext): Promise<{ provider: string; eventId: string; force: string }> {
  const form = await c.req.parseBody();
  const text = (key: string) => (typeof form[key] === 'string' ? form[key] : '');
  if (!text('provider') || !text('id'))
    throw new ConsoleError('invalid_input', 'provider and id are required');
  return { provider: text('provider'), eventId: text('id'), force: text('force') };
}

/**
 * The event page's action: replays the event (its unfinished effects, or one completed effect forced), audited in
 * its transaction, and goes back to the event page with what was queued.
 */
export function eventReplayAction(app: ConsoleApp, services: ConsoleServices): void {
  app.post('/event/replay', async (c) => {
    const { provider, eventId, force } = await formKey(c);
    // The replay writes its audit row in its own transaction, as the signed-in operator.
    const auditAs = c.get('principal');
    const result = await replayOrRefuse(async () =>
      replayEvent(await replayDeps(services), provider, eventId, {
        auditAs,
        ...(force ? { forceEffect: force } : {}),
      }),
    );
    services.logger.info(
      { provider, eventId, forced: result.forced, enqueued: result.enqueued, who: c.get('session').who },
      'console replay',
    );
    const message = result.enqueued
      ? `Replay queued: ${result.effects ? result.effects.join(', ') : 'the unfinished effects'} will run.`
      : 'Nothing to replay: every effect has completed.';
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
