import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { cpuMs, ownCpuMs } from './process.ts';
import { fixed } from './table.ts';

/**
 * One measurement taken in slices, in turns with others: requests and seconds add up, latencies merge, and the
 * CPU time of each party is summed over the slices only.
 */
export class Tally {
  private completed = 0;
  private seconds = 0;
  private readonly histogram = createHistogram();
  private readonly cpuMs = { here: 0, server: 0, postgres: 0 };
  private readonly batches = { requests: 0, transactions: 0 };

  /** `batches`: the server's group-commit totals, read around the slice (the receiver only). */
  async measure(
    postmaster: number,
    serverPid: number | undefined,
    slice: () => Promise<{ completed: number; histogram: RecordableHistogram }>,
    batches?: () => Promise<BatchStats>,
  ): Promise<void> {
    const batchesBefore = await batches?.();
    const cpuNow = () => ({
      here: ownCpuMs(),
      server: serverPid === undefined ? 0 : cpuMs(serverPid),
      postgres: cpuMs(postmaster, { children: true }),
    });
    const before = cpuNow();
    const started = performance.now();
    const result = await slice();
    this.seconds += (performance.now() - started) / 1000;
    const after = cpuNow();
    this.completed += result.completed;
    this.histogram.add(result.histogram);
    for (const key of ['here', 'server', 'postgres'] as const) this.cpuMs[key] += after[key] - before[key];
    const batchesAfter = await batches?.();
    if (batchesBefore && batchesAfter) {
      this.batches.requests += batchesAfter.requests - batchesBefore.requests;
      this.batches.transactions += batchesAfter.transactions - batchesBefore.transactions;
    }
  }

  /** Requests per committed group-commit transaction; undefined when none was read. */
  get meanBatch(): number | undefined {
    return this.batches.transactions ? this.batches.requests / this.batches.transactions : undefined;
  }

  get rps(): number {
    return this.completed / this.seconds;
  }
  get p50Ms(): number {
    return this.completed ? this.histogram.percentile(50) / 1e6 : 0;
  }
  get p99Ms(): number {
    return this.completed ? this.histogram.percentile(99) / 1e6 : 0;
  }
  get cpu(): CpuPerRequest {
    const per = (ms: number) => (ms * 1000) / this.completed;
    return {
      here: per(this.cpuMs.here),
      receiver: per(this.cpuMs.server),
      postgres: per(this.cpuMs.postgres),
    };
  }
}

export interface CpuPerRequest {
  here: number;
  receiver: number;
  postgres: number;
}

export const CPU_COLUMN = 'CPU µs/req: bench / server / pg';
export const BATCH_COLUMN = 'req/commit';

export interface BatchStats {
  /** Requests answered by committed group-commit transactions, and those transactions. */
  requests: number;
  transactions: number;
  /** Committed transactions by size: `le` bucket bound -> cumulative count, as Prometheus keeps them. */
  buckets: Array<[le: string, count: number]>;
}

/** The receiver's committed group-commit transactions so far, from its `/metrics`. */
export async function batchStats(managementUrl: string): Promise<BatchStats> {
  const text = await (await fetch(new URL('/metrics', managementUrl))).text();
  const series = (name: string) =>
    Number(
      new RegExp(`^webhook_ingest_batch_requests_${name}\\{outcome="committed"\\} (\\S+)`, 'm').exec(
        text,
      )?.[1] ?? 0,
    );
  const buckets = [
    ...text.matchAll(/^webhook_ingest_batch_requests_bucket\{le="([^"]+)",outcome="committed"\} (\d+)/gm),
  ].map((m): [string, number] => [m[1]!, Number(m[2])]);
  return { requests: series('sum'), transactions: series('count'), buckets };
}

/** "1: 40%, 2: 10%, 3-4: ..." of committed transactions by requests held. */
export function formatBatchHistogram({ buckets, transactions }: BatchStats): string {
  if (!transactions) return 'none';
  let previous = 0;
  let lower = 1;
  const parts: string[] = [];
  for (const [le, count] of buckets) {
    const share = count - previous;
    const upper = le === '+Inf' ? '' : le;
    if (share > 0)
      parts.push(
        `${lower === Number(upper) ? upper : `${lower}-${upper}`}: ${fixed((share / transactions) * 100, 0)}%`,
      );
    previous = count;
    lower = Number(le) + 1;
  }
  return `${transactions} transactions, by requests held: ${parts.join(', ')}`;
}

export function formatCpu(cpu: CpuPerRequest): string {
  const µs = (n: number) => (Number.isFinite(n) && n > 0 ? fixed(n, 0) : '-');
  return `${µs(cpu.here)} / ${µs(cpu.receiver)} / ${µs(cpu.postgres)}`;
}
