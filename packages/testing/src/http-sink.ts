/**
 * A loopback HTTP endpoint standing for a webhook consumer (a destination, `webhook-inbox listen`'s local app): it
 * keeps every request it received (headers and raw body) and answers as its test says, possibly holding an answer
 * until the test releases it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
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
  close(): Promise<void>;
}

export async function startSink(responder: Responder = () => ({ status: 200, body: 'ok' })): Promise<Sink> {
  const requests: SinkRequest[] = [];
  let inFlight = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const index = requests.push(request) - 1;
      inFlight++;
      void Promise.resolve(responder(request, index)).then((answer) => {
        inFlight--;
        res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    requests,
    inFlight: () => inFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
