/**
 * A loopback HTTP endpoint that stands in for a webhook consumer (a destination, `webhook-inbox listen`'s local app): it keeps every request it received (headers, raw body,
 * when it arrived and when it was answered, by its own clock), answers as its test says (possibly holding an answer
 * until the test releases it), counts the requests in flight, and can go down (connections refused) and come back
 * on the same port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When its body was read, ms since the epoch (the sink's clock). */
  receivedAt: number;
  /** When its answer was sent; undefined while it is held. */
  answeredAt?: number;
}

export interface SinkAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export type Responder = (request: SinkRequest, index: number) => SinkAnswer | Promise<SinkAnswer>;

export interface Sink {
  readonly url: string;
  readonly requests: SinkRequest[];
  /** Requests received whose answer has not been sent yet. */
  inFlight(): number;
  /** The most requests in flight at once so far. */
  maxInFlight(): number;
  /** Stops listening and drops open connections: new connections are refused until `up()`. */
  down(): Promise<void>;
  /** Listens again, on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookSink(
  responder: Responder = () => ({ status: 200, body: 'ok' }),
): Promise<Sink> {
  const requests: SinkRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: SinkRequest = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const index = requests.push(request) - 1;
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      void Promise.resolve(responder(request, index)).then((answer) => {
        inFlight--;
        request.answeredAt = Date.now();
        res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      });
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    down: stop,
    up: () => listen(port),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
