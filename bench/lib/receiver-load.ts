import { randomBytes } from 'node:crypto';
import { httpLoad, type HttpLoadResult } from './http-load.ts';
import { cpuMs } from './process.ts';
import type { SpawnedReceiver } from './receiver-process.ts';
import { newEventRequests, signedAhead } from './stripe-requests.ts';
import { inTurns, Turns } from './turns.ts';

/** Concurrent keep-alive connections of a load when none is given. */
export const DEFAULT_CONNECTIONS = 16;

/** One HTTP run against the receiver; fails unless every response was a 200 with the expected outcome. */
export async function load(
  url: string,
  options: {
    durationMs: number;
    /** Concurrent keep-alive connections; default DEFAULT_CONNECTIONS. */
    connections?: number;
    ratePerSecond?: number;
    next: () => Buffer;
  },
  outcome: 'accepted' | 'duplicate',
): Promise<HttpLoadResult> {
  const { hostname, port } = new URL(url);
  const expected = Buffer.from(`"status":"${outcome}"`);
  const result = await httpLoad({
    host: hostname,
    port: Number(port),
    connections: options.connections ?? DEFAULT_CONNECTIONS,
    durationMs: options.durationMs,
    ...(options.ratePerSecond ? { ratePerSecond: options.ratePerSecond } : {}),
    next: options.next,
    accept: (status, body) => status === 200 && body.includes(expected),
  });
  if (result.unexpected > 0 || result.errors > 0 || result.completed === 0) {
    throw new Error(
      `${outcome}: ${result.unexpected} unexpected responses, ${result.errors} errors of ${result.completed} (e.g. ${result.sample})`,
    );
  }
  return result;
}

/** One receiver's figures summed over its turns. */
export interface ReceiverTotals {
  completed: number;
  seconds: number;
  /** The receiver process's own CPU time (user + system) during its turns, ms. */
  cpuMs: number;
  /** Each turn's p99, and all turns' requests pooled. */
  latency: Turns;
}

/** Requests per second over all turns. */
export const rateOf = (totals: ReceiverTotals) => totals.completed / totals.seconds;

/**
 * New events at the maximum rate, receiver against receiver: each warmed up for `warmUpMs`, then `rounds` turns
 * of `sliceMs` each (`inTurns`), every turn's first `signAhead` requests signed before its clock starts.
 */
export async function receiverTurns<M extends string>(
  receivers: Record<M, SpawnedReceiver>,
  options: {
    rounds: number;
    sliceMs: number;
    /** Default: distinct new events (`newEventRequests`) under a random prefix. */
    next?: () => Buffer;
    /** Default 30 000. */
    signAhead?: number;
    connections?: number;
    warmUpMs?: number;
  },
): Promise<Record<M, ReceiverTotals>> {
  const {
    connections,
    next = newEventRequests(randomBytes(4).toString('hex')),
    signAhead = 30_000,
  } = options;
  const modes = Object.keys(receivers) as M[];
  for (const mode of modes) {
    await load(receivers[mode].url, { durationMs: options.warmUpMs ?? 1_000, connections, next }, 'accepted');
  }
  const totals = Object.fromEntries(
    modes.map((mode) => [mode, { completed: 0, seconds: 0, cpuMs: 0, latency: new Turns() }]),
  ) as Record<M, ReceiverTotals>;
  await inTurns(modes, options.rounds, async (mode) => {
    const receiver = receivers[mode];
    const turn = signedAhead(next, signAhead);
    const cpuAtStart = cpuMs(receiver.child.pid!);
    const result = await load(
      receiver.url,
      { durationMs: options.sliceMs, connections, next: turn },
      'accepted',
    );
    totals[mode].completed += result.completed;
    totals[mode].seconds += options.sliceMs / 1000;
    totals[mode].cpuMs += cpuMs(receiver.child.pid!) - cpuAtStart;
    totals[mode].latency.add(result.histogram);
  });
  return totals;
}
