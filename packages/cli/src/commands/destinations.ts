/**
 * `webhook-inbox destinations`: the destinations the workers started, with their state and figures (as the
 * console's Destinations page shows them), and an operator's pause and resume, audited as the CLI's user.
 */
import {
  DestinationNotFoundError,
  listDestinations,
  setDestinationPaused,
} from '@webhook-inbox/operator/destinations';
import type { CliContext } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';

const percent = (rate: number | null) => (rate === null ? '-' : `${(rate * 100).toFixed(1)}%`);
const ms = (value: number | null) => (value === null ? '-' : String(Math.round(value)));

/** Every destination: state, reason, success rate and latency over the last 24 hours, backlog. */
export async function list(context: CliContext, options: { json: boolean }): Promise<void> {
  const rows = await listDestinations(await context.pool());
  if (options.json) {
    printJson(rows);
    return;
  }
  printRows(
    rows.map((d) => ({
      name: d.name,
      group: d.group,
      state: d.state,
      success24h: percent(d.successRate),
      attempts: d.attempts,
      pending: d.pending,
      oldestPending: d.oldestPending?.toISOString() ?? '-',
      p50ms: ms(d.p50Ms),
      p99ms: ms(d.p99Ms),
      reason: d.reason ?? '',
    })),
    false,
  );
}

/** Pauses (`paused` true) or resumes one destination; exit 3 when no worker started one of that name. */
export async function setPaused(context: CliContext, name: string, paused: boolean): Promise<void> {
  try {
    await setDestinationPaused(await context.pool(), context.principal(), name, paused);
  } catch (error) {
    if (error instanceof DestinationNotFoundError) throw new NotFoundError(error.message);
    throw error;
  }
  process.stdout.write(`${name}: ${paused ? 'paused' : 'resumed'}\n`);
}
