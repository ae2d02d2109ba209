/**
 * One delivery's HTTP request: a POST with node's own client, so that the address checked is the address connected
 * to (`lookup` is the connection's), no redirect is ever followed (node's client follows none: a 3xx is an
 * answer, and a failure), and TLS is verified (the default, never turned off here).
 *
 * A destination's requests share its keep-alive agent (`destinationAgent`): a connection is checked when it is made
 * and reused while the endpoint keeps it open, as `fetch` would, rather than a connection (and a TLS handshake) per
 * delivery. An answer read to its end gives its connection back; one cut at the excerpt closes it.
 */
import http from 'node:http';
import https from 'node:https';
import { checkLiteralHost, guardedLookup } from './address-policy.ts';

/** At most this much of an answer's body is kept with its attempt. */
export const EXCERPT_BYTES = 1024;

export interface OutboundRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivateNetwork: boolean;
  /** The destination's agent; without one, a connection of its own, closed after the answer. */
  agent?: http.Agent | undefined;
}

/**
 * A destination's keep-alive agent: at most `concurrency` connections (one per request in flight), idle ones closed
 * a second before the endpoint's own `Keep-Alive: timeout` (node's agent reads it), else after `IDLE_MS`.
 */
export function destinationAgent(url: URL, concurrency: number): http.Agent {
  const options = { keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, timeout: IDLE_MS };
  return url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

/** How long an idle connection is kept when the endpoint names no keep-alive timeout: under node's server's 5 s. */
const IDLE_MS = 4_000;

/** How a request ended: an answer (any status), or no answer and why. */
export type OutboundResult =
  | {
      kind: 'answer';
      status: number;
      excerpt: string;
      /** `Retry-After`, in milliseconds from now, when the answer carried one. */
      retryAfterMs: number | undefined;
      durationMs: number;
    }
  | { kind: 'error'; error: Error; durationMs: number };

/** Sends `request` once; never throws. */
export async function send(request: OutboundRequest, now: () => number = Date.now): Promise<OutboundResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  try {
    if (!request.allowPrivateNetwork) checkLiteralHost(request.url.hostname);
  } catch (error) {
    return { kind: 'error', error: error as Error, durationMs: elapsed() };
  }
  const client = request.url.protocol === 'https:' ? https : http;
  const body = Buffer.from(request.body);
  return new Promise<OutboundResult>((resolve) => {
    let settled = false;
    const finish = (result: OutboundResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = client.request(request.url, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(body.length) },
      agent: request.agent ?? false,
      ...(request.allowPrivateNetwork ? {} : { lookup: guardedLookup }),
    });
    const timer = setTimeout(() => {
      req.destroy(
        Object.assign(new Error(`no answer within ${request.timeoutMs} ms`), { code: 'ETIMEDOUT' }),
      );
    }, request.timeoutMs);
    req.on('error', (error) => finish({ kind: 'error', error, durationMs: elapsed() }));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      const done = (cut: boolean) => {
        const retryAfter = res.headers['retry-after'];
        finish({
          kind: 'answer',
          status: res.statusCode ?? 0,
          excerpt: Buffer.concat(chunks).toString('utf8').replaceAll('\uFFFD', ''),
          retryAfterMs: retryAfter === undefined ? undefined : parseRetryAfter(retryAfter, now()),
          durationMs: elapsed(),
        });
        if (cut) res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (kept < EXCERPT_BYTES) {
          const part = chunk.subarray(0, EXCERPT_BYTES - kept);
          chunks.push(part);
          kept += part.length;
        }
        // The answer's status is what counts: the rest of a large body is not read.
        if (kept >= EXCERPT_BYTES) done(true);
      });
      res.on('end', () => done(false));
      res.on('error', () => done(true));
    });
    req.end(body);
  });
}

/** `Retry-After`: delay-seconds or an HTTP date; undefined when neither. */
export function parseRetryAfter(value: string, now: number): number | undefined {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
