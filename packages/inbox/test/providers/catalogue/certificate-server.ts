import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { CertificateFetch } from '../../../src/providers/catalogue/certificates.ts';

/**
 * A loopback HTTP server standing in for a provider's certificate host: it answers every path with `pem()` (or,
 * while `down` is set, 503), and counts the requests it gets. `fetch` maps a documented https URL onto it, path
 * kept, so the providers' allow-list sees the real URL and the request stays on this machine.
 */
export interface CertificateServer {
  readonly requests: string[];
  fetch: CertificateFetch;
  down: boolean;
}

/** Started before the file's tests and closed after them. */
export function useCertificateServer(pem: () => string): CertificateServer {
  let server: Server | undefined;
  let origin = '';
  const state: CertificateServer = {
    requests: [],
    down: false,
    fetch: (url, init) => fetch(`${origin}${new URL(url).pathname}`, init),
  };
  beforeAll(async () => {
    server = createServer((request, response) => {
      state.requests.push(request.url ?? '');
      if (state.down) return response.writeHead(503).end();
      response.end(pem());
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  return state;
}

/** The error code an async verification fails with (a WebhookError's or a CertificateError's), or `'no error'`. */
export async function asyncCodeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'no error';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    throw error;
  }
}
