import type { BenchPostgres } from './postgres.ts';

/** What every benchmark is given by `bench/run.ts`. */
export interface BenchContext {
  postgres: BenchPostgres;
  durationMs: number;
  log(message: string): void;
  /** `--events`: the table size of a benchmark that fills one (the console's). */
  events?: number;
}
