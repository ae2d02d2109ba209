/**
 * `webhook-inbox destinations`: the destinations the workers started, with their state and figures (as the
 * console's Destinations page shows them), and an operator's pause and resume, audited as the CLI's user; or, with
 * `--url` and a token, through a remote receiver's admin API (`/admin/destinations`), as the token.
 */
import {
  DestinationNotFoundError,
  listDestinations,
  setDestinationPaused,
  type DestinationOverview,
} from '@webhook-inbox/operator/destinations';
import type { CliContext } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';
import { adminRequest } from '../remote.ts';

/** `--url` and `--token`: the remote admin API instead of the database. */
export interface RemoteFlags {
  url?: string;
  token?: string;
}

export interface DestinationsOptions extends RemoteFlags {
  json: boolean;
}

/** A destination as the list shows it: the database's rows, or the admin API's JSON of them. */
type Listed = Omit<DestinationOverview, 'oldestPending'> & { oldestPending: Date | string | null };

const percent = (rate: number | null) => (rate === null ? '-' : `${(rate * 100).toFixed(1)}%`);
const ms = (value: number | null) => (value === null ? '-' : String(Math.round(value)));

/** Every destination: state, reason, success rate and latency over the last 24 hours, backlog. */
export async function list(context: CliContext, options: DestinationsOptions): Promise<void> {
  const api = context.adminApi(options);
  const rows: Listed[] = api
    ? (await adminRequest<{ destinations: Listed[] }>(api, 'GET', '/destinations')).destinations
    : await listDestinations(await context.pool());
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
      oldestPending: d.oldestPending === null ? '-' : new Date(d.oldestPending).toISOString(),
      p50ms: ms(d.p50Ms),
      p99ms: ms(d.p99Ms),
      reason: d.reason ?? '',
    })),
    false,
  );
}

/**
 * Pauses (`paused` true) or resumes one destination; exit 3 when no worker started one of that name (or, remote, none
 * of the token's groups).
 */
export async function setPaused(
  context: CliContext,
  name: string,
  paused: boolean,
  flags: RemoteFlags = {},
): Promise<void> {
  const api = context.adminApi(flags);
  if (api) {
    const path = `/destinations/${encodeURIComponent(name)}/${paused ? 'pause' : 'resume'}`;
    await adminRequest(api, 'POST', path);
    process.stdout.write(`${name}: ${paused ? 'paused' : 'resumed'}\n`);
    return;
  }
  try {
    await setDestinationPaused(await context.pool(), context.principal(), name, paused);
  } catch (error) {
    if (error instanceof DestinationNotFoundError) throw new NotFoundError(error.message);
    throw error;
  }
  process.stdout.write(`${name}: ${paused ? 'paused' : 'resumed'}\n`);
}
