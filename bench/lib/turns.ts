import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { fixed } from './table.ts';

/** The p99 of each turn (or slice) of one measurement, and of all of them pooled. */
export class Turns {
  readonly p99s: number[] = [];
  readonly #pooled = createHistogram();

  add(histogram: RecordableHistogram): void {
    this.p99s.push(histogram.percentile(99) / 1e6);
    this.#pooled.add(histogram);
  }

  /** The median turn's p99 (ms): what a turn without a stall of the machine looks like. */
  get medianMs(): number {
    const sorted = [...this.p99s].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  }

  /** The median of all turns' requests together (ms). */
  get p50Ms(): number {
    return this.#pooled.percentile(50) / 1e6;
  }

  get pooledMs(): number {
    return this.#pooled.percentile(99) / 1e6;
  }

  get worstMs(): number {
    return Math.max(...this.p99s);
  }

  /** Each turn's p99, ms, as a list. */
  each(): string {
    return this.p99s.map((ms) => fixed(ms, 0)).join(', ');
  }

  /** `median (pooled, worst turn)`, ms. */
  toString(): string {
    return `${fixed(this.medianMs, 1)} (${fixed(this.pooledMs, 1)}, ${fixed(this.worstMs, 1)})`;
  }
}

/**
 * The turn loop every same-run comparison uses: `rounds` rounds, each running `turn` once per mode, so the
 * machine's drift (tens of percent within a minute on a shared virtual machine) falls on every mode alike. With
 * `abba`, every other round runs the modes in reverse, so none always goes first.
 */
export async function inTurns<M>(
  modes: readonly M[],
  rounds: number,
  turn: (mode: M, round: number) => Promise<void>,
  { abba = false }: { abba?: boolean } = {},
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const order = abba && round % 2 === 1 ? [...modes].reverse() : modes;
    for (const mode of order) await turn(mode, round);
  }
}
