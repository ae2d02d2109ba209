import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

export interface LoadResult {
  completed: number;
  failed: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Every task's latency (ns), to merge with other slices of the same measurement. */
  histogram: RecordableHistogram;
  /** The first failure, to show what went wrong. */
  firstError?: unknown;
}

/**
 * A closed loop: `concurrency` workers each run `task` back to back for `durationMs`. Latency is per task, in a
 * nanosecond histogram (not rounded to whole milliseconds).
 */
export async function closedLoop(
  concurrency: number,
  durationMs: number,
  task: (worker: number, iteration: number) => Promise<unknown>,
): Promise<LoadResult> {
  const histogram = createHistogram();
  let completed = 0;
  let failed = 0;
  let firstError: unknown;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let iteration = 0; performance.now() < deadline; iteration++) {
        const t0 = process.hrtime.bigint();
        try {
          await task(worker, iteration);
          histogram.record(process.hrtime.bigint() - t0 || 1n);
          completed++;
        } catch (error) {
          failed++;
          firstError ??= error;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    completed,
    failed,
    seconds,
    rps: completed / seconds,
    p50Ms: histogram.percentile(50) / 1e6,
    p99Ms: histogram.percentile(99) / 1e6,
    histogram,
    firstError,
  };
}
