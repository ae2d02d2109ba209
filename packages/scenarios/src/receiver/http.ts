import http from 'node:http';
import type { Delivery } from './deliveries.ts';

export interface HttpResult {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A POST on its own TCP connection (no agent, no keep-alive), like a separate delivery from the provider. */
export function post(
  baseUrl: string,
  delivery: Delivery,
  options: { timeoutMs?: number; method?: string } = {},
): Promise<HttpResult> {
  const url = new URL(delivery.path, baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: options.method ?? 'POST',
        agent: false,
        headers: {
          ...delivery.headers,
          connection: 'close',
          'content-length': Buffer.byteLength(delivery.body),
        },
        timeout: options.timeoutMs ?? 15_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            headers: response.headers,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('request timed out')));
    request.on('error', reject);
    request.end(delivery.body);
  });
}

export async function getStatus(baseUrl: string, path: string): Promise<number> {
  const response = await fetch(new URL(path, baseUrl), { signal: AbortSignal.timeout(5_000) });
  await response.arrayBuffer();
  return response.status;
}
