import net from 'node:net';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

/**
 * A minimal HTTP/1.1 load generator for the receiver benchmark: keep-alive connections over raw sockets, each
 * request pre-serialised to bytes before the clock starts, one request in flight per connection.
 *
 * Why not autocannon: on a 2-core machine the load generator shares the CPUs with the receiver and PostgreSQL,
 * so what it spends per request is taken from the system it measures. Against a trivial server here, autocannon
 * used 32-41 µs of CPU per request and this 26-28 µs; it also measures latency in microseconds (autocannon
 * rounds to whole milliseconds). The larger saving is signing before the run (see bench/receiver.ts): signing
 * in autocannon's per-request hook cost several hundred µs of the generator's CPU per request under load.
 */

export interface HttpLoadOptions {
  host: string;
  port: number;
  connections: number;
  durationMs: number;
  /** The bytes of the next request (a complete HTTP/1.1 request with Content-Length); called once per request. */
  next: () => Buffer;
  /** Checks each response (status and body); a false makes it count as unexpected. */
  accept: (status: number, body: Buffer) => boolean;
  /**
   * Open loop at this many requests per second in total: each request has a scheduled start, and its latency
   * counts from then, so a stall delays and is charged to the requests behind it (no coordinated omission).
   * Unset: closed loop, each connection sends its next request as soon as the answer arrives.
   */
  ratePerSecond?: number;
}

export interface HttpLoadResult {
  completed: number;
  unexpected: number;
  errors: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Every response's latency (ns), to merge with other slices of the same measurement. */
  histogram: RecordableHistogram;
  /**
   * Every response's time from the request's write (ns): without the time it waited for its slot, a free
   * connection or the load generator's own event loop. At a fixed rate, the gap to `histogram` is the queueing
   * before the write.
   */
  fromWrite: RecordableHistogram;
  /** One unexpected response or error, to show what went wrong. */
  sample?: string;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

/** Builds the bytes of one POST request. */
export function httpRequest(
  path: string,
  headers: Record<string, string>,
  body: string,
  host = '127.0.0.1',
): Buffer {
  const payload = Buffer.from(body);
  const lines = [`POST ${path} HTTP/1.1`, `host: ${host}`, `content-length: ${payload.length}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), payload]);
}

export async function httpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const histogram = createHistogram();
  const fromWrite = createHistogram();
  let completed = 0;
  let unexpected = 0;
  let errors = 0;
  let sample: string | undefined;
  // A slice's requests are signed just before it: their garbage, collected here, would otherwise be collected in
  // the first few hundred ms of the slice, holding this process up 20-100 ms and charging it to the receiver's
  // first requests. `pnpm bench` runs with --expose-gc.
  (globalThis as { gc?: () => void }).gc?.();
  // The clock starts once every connection is open: a TCP handshake is not the receiver's latency, and 16-64 of
  // them at a slice's start would otherwise be charged to its first requests.
  let started = 0;
  let deadline = 0;
  let settled = 0;
  let go!: () => void;
  const allOpen = new Promise<void>((resolve) => (go = resolve));
  const opened = () => {
    if (++settled < options.connections) return;
    started = performance.now();
    deadline = started + options.durationMs;
    go();
  };
  const interval = options.ratePerSecond ? 1000 / options.ratePerSecond : 0;
  let scheduled = 0; // open loop: requests handed out so far

  /** Open loop: the scheduled start of the next request, or undefined once past the deadline. */
  const nextSlot = (): number | undefined => {
    const at = started + scheduled * interval;
    if (at >= deadline) return undefined;
    scheduled++;
    return at;
  };

  const runConnection = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = net.connect({ host: options.host, port: options.port, noDelay: true });
      let buffered: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      let wroteAt = 0;
      let timer: NodeJS.Timeout | undefined;
      let done = false;

      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.destroy();
        resolve();
      };
      const fire = (at: number) => {
        sentAt = at;
        const request = options.next();
        wroteAt = performance.now();
        socket.write(request);
      };
      const sendNext = () => {
        const now = performance.now();
        if (!interval) {
          if (now >= deadline) return finish();
          return fire(now);
        }
        const at = nextSlot();
        if (at === undefined) return finish();
        if (at <= now) return fire(at);
        timer = setTimeout(() => fire(at), at - now);
      };

      let connected = false;
      socket.on('connect', () => {
        connected = true;
        opened();
        void allOpen.then(sendNext);
      });
      socket.on('data', (chunk: Buffer) => {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
        const headerEnd = buffered.indexOf(HEADER_END);
        if (headerEnd < 0) return;
        const head = buffered.subarray(0, headerEnd).toString('latin1');
        const length = CONTENT_LENGTH.exec(head);
        if (!length) {
          errors++;
          sample ??= `no content-length in response: ${head.slice(0, 200)}`;
          return finish();
        }
        const bodyEnd = headerEnd + HEADER_END.length + Number(length[1]);
        if (buffered.length < bodyEnd) return;
        const status = Number(head.slice(9, 12));
        const body = buffered.subarray(headerEnd + HEADER_END.length, bodyEnd);
        buffered = buffered.subarray(bodyEnd);
        const now = performance.now();
        histogram.record(Math.max(1, Math.round((now - sentAt) * 1e6)));
        fromWrite.record(Math.max(1, Math.round((now - wroteAt) * 1e6)));
        completed++;
        if (!options.accept(status, body)) {
          unexpected++;
          sample ??= `${status} ${body.toString('utf8', 0, 200)}`;
        }
        sendNext();
      });
      socket.on('error', (error) => {
        if (!connected) opened();
        errors++;
        sample ??= error.message;
        finish();
      });
      socket.on('close', finish);
    });

  await Promise.all(Array.from({ length: options.connections }, runConnection));
  const seconds = (performance.now() - started) / 1000;
  return {
    completed,
    unexpected,
    errors,
    rps: completed / seconds,
    p50Ms: completed ? histogram.percentile(50) / 1e6 : 0,
    p99Ms: completed ? histogram.percentile(99) / 1e6 : 0,
    histogram,
    fromWrite,
    sample,
  };
}
