/**
 * One delivery's HTTP request: a POST with node's own client, so that the address checked is the address connected
 * to (`lookup` is the connection's), no redirect is ever followed (node's client follows none: a 3xx is an
 * answer, and a failure), and TLS is verified (the default, never turned off here).
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
}

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
      agent: false,
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
      const done = () => {
        const retryAfter = res.headers['retry-after'];
        finish({
          kind: 'answer',
          status: res.statusCode ?? 0,
          excerpt: Buffer.concat(chunks).toString('utf8').replaceAll('\uFFFD', ''),
          retryAfterMs: retryAfter === undefined ? undefined : parseRetryAfter(retryAfter, now()),
          durationMs: elapsed(),
        });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (kept < EXCERPT_BYTES) {
          const part = chunk.subarray(0, EXCERPT_BYTES - kept);
          chunks.push(part);
          kept += part.length;
        }
        // The answer's status is what counts: the rest of a large body is not read.
        if (kept >= EXCERPT_BYTES) done();
      });
      res.on('end', done);
      res.on('error', done);
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
