import type { EffectStep, StepInfo } from '@webhook-inbox/inbox';
import type { Fault } from './env.ts';
import type { Logger } from './logger.ts';

/**
 * The test-only crash switch (WORKER_FAULT=<step>:<effect>): at that step of that effect the process dies with
 * SIGKILL, as a power cut would, with no exception, no `finally`, no graceful anything.
 */
export function faultHook(
  fault: Fault | undefined,
  logger: Logger,
): ((step: EffectStep, info: StepInfo) => void) | undefined {
  if (!fault) return undefined;
  logger.warn({ fault }, 'WORKER_FAULT is set: this process will SIGKILL itself at that step');
  return (step, info) => {
    if (step !== fault.step || info.effect !== fault.effect) return;
    // Straight to stderr (synchronous for files and pipes): the logger's buffer dies with the process.
    process.stderr.write(
      `${JSON.stringify({ level: 40, ...info, step, msg: 'WORKER_FAULT: SIGKILL now' })}\n`,
    );
    process.kill(process.pid, 'SIGKILL');
  };
}
