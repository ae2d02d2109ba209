import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * A loopback HTTP server standing in for a provider's certificate host: it answers every path with `pem()` (or,
 * while `down` is set, 503), and counts the requests it gets. `fetch` (a provider's or the receiver's injectable
 * certificate fetch) maps a documented https URL onto it, path kept, so the providers' allow-list sees the real
 * URL and the request stays on this machine.
 */
export interface CertificateServer {
  readonly requests: string[];
  /** `http://127.0.0.1:<port>`, once the server listens. */
  readonly origin: string;
  fetch: (url: string, init: { signal: AbortSignal }) => Promise<Response>;
  down: boolean;
}

/** Started before the file's tests and closed after them. */
export function useCertificateServer(pem: () => string): CertificateServer {
  let server: Server | undefined;
  let origin = '';
  const state: CertificateServer = {
    requests: [],
    get origin() {
      return origin;
    },
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
