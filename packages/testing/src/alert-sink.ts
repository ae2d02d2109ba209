import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AlertSink {
  /** Give it to the worker as ALERT_WEBHOOK_URL. */
  url: string;
  /** Each request body received, in order. */
  bodies: string[];
  close(): Promise<void>;
}

/** A local HTTP server that stands in for Slack: it keeps every alert POSTed to it and answers 200. */
export async function startAlertSink(): Promise<AlertSink> {
  const bodies: string[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      bodies.push(body);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
