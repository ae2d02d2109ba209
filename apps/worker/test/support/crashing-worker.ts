/**
 * The real worker (`startWorker` with the environment's configuration, as `src/server.ts` runs it) whose process
 * SIGKILLs itself at one point of one effect: `node test/support/crashing-worker.ts <point>:<effect>`, or
 * `after-settle-before-complete` (no effect: the event's). A power cut, not a shutdown: no exception, no
 * `finally`, nothing flushed.
 *
 * The points are reached from outside the runner, through the worker's public options: the effect's function is
 * wrapped (`before-effect`, `after-effect-before-commit`), and the inbox's observer reports each effect that
 * committed and each event that settled (`after-commit`, `after-settle-before-complete`).
 */
import {
  createInbox,
  type EffectMap,
  type EffectSpec,
  type Inbox,
  type InboxObserver,
  type InboxOptions,
} from '@webhook-inbox/inbox';
import { parseConfig } from '../../src/env.ts';
import { createLogger } from '../../src/logger.ts';
import { startWorker } from '../../src/worker.ts';
import { CRASH_MARKER, CRASH_POINTS, type CrashPoint } from './crash-points.ts';

const [point = '', effect = ''] = (process.argv[2] ?? '').split(':');
if (!CRASH_POINTS.includes(point as CrashPoint) || (!effect && point !== 'after-settle-before-complete')) {
  process.stderr.write(
    `usage: crashing-worker.ts <${CRASH_POINTS.join('|')}>:<effect name> | after-settle-before-complete\n`,
  );
  process.exit(2);
}
const at = { point: point as CrashPoint, effect };

function crash(where: Record<string, string>): void {
  // Straight to stderr (synchronous for pipes and files): the logger's buffer dies with the process.
  process.stderr.write(`${JSON.stringify({ level: 40, ...where, point: at.point, msg: CRASH_MARKER })}\n`);
  process.kill(process.pid, 'SIGKILL');
}

function wrapRun<C>(run: (ctx: C) => Promise<void> | void): (ctx: C) => Promise<void> {
  return async (ctx) => {
    if (at.point === 'before-effect') crash({ effect: at.effect });
    await run(ctx);
    if (at.point === 'after-effect-before-commit') crash({ effect: at.effect });
  };
}

function wrapEffects<E>(effects: EffectMap<E>): EffectMap<E> {
  return Object.fromEntries(
    Object.entries(effects).map(([name, spec]): [string, EffectSpec<E>] => {
      if (name !== at.effect) return [name, spec];
      if (typeof spec === 'function') return [name, wrapRun(spec)];
      if (spec.kind === 'external') return [name, { ...spec, run: wrapRun(spec.run) }];
      return [name, { ...spec, run: wrapRun(spec.run) }];
    }),
  );
}

/** `createInbox` with the crash point's effect wrapped and its outcomes watched. */
function crashingInbox(options: InboxOptions): Inbox {
  const observer: InboxObserver = {
    batch: (size, ms) => options.observer?.batch?.(size, ms),
    effect: (outcome) => {
      options.observer?.effect?.(outcome);
      if (at.point === 'after-commit' && outcome.effect === at.effect && outcome.status === 'completed') {
        crash({ effect: outcome.effect });
      }
    },
    event: (outcome) => {
      options.observer?.event?.(outcome);
      if (at.point === 'after-settle-before-complete' && outcome.status === 'processed') {
        crash({ eventId: outcome.eventId });
      }
    },
  };
  const inbox = createInbox({ ...options, observer });
  const wrapper: Inbox = {
    on: (provider, type, effects) => {
      inbox.on(provider, type, wrapEffects(effects));
      return wrapper;
    },
    routes: () => inbox.routes(),
    effectsFor: (provider, type) => inbox.effectsFor(provider, type),
    effectRoutes: () => inbox.effectRoutes(),
    start: (start) => inbox.start(start),
  };
  return wrapper;
}

const config = parseConfig();
const logger = createLogger(config.logLevel);
logger.warn({ crashAt: at }, 'crashing worker: this process SIGKILLs itself at that point');
const worker = await startWorker(config, { logger, createInbox: crashingInbox });
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
