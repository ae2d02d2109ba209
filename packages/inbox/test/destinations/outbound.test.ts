/**
 * A destination's requests over real loopback HTTP: they share its keep-alive connections (one connection for a
 * run of sequential deliveries, as `fetch` would), an answer cut at the excerpt closes its connection, and a request
 * without the destination's agent has a connection of its own.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { destinationAgent, EXCERPT_BYTES, send } from '../../src/destinations/outbound.ts';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server answering 204, or `body` with 200, that counts the connections made to it. */
async function endpoint(body?: string): Promise<{ url: URL; connections: () => number }> {
  let connections = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (body === undefined) response.writeHead(204).end();
      else response.writeHead(200, { 'content-type': 'text/plain' }).end(body);
    });
  });
  server.on('connection', () => void connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/hooks`), connections: () => connections };
}

const request = (url: URL, agent?: http.Agent) => ({
  url,
  headers: { 'content-type': 'application/json' },
  body: '{"id":"evt_1"}',
  timeoutMs: 5_000,
  allowPrivateNetwork: true,
  agent,
});

describe('outbound connections', () => {
  it("reuses the destination's connection for sequential deliveries", async () => {
    const target = await endpoint();
    const agent = destinationAgent(target.url, 4);
    try {
      for (let i = 0; i < 5; i++)
        expect(await send(request(target.url, agent))).toMatchObject({ status: 204 });
      expect(target.connections()).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('closes a connection whose answer was cut at the excerpt, and opens one per request without an agent', async () => {
    const large = await endpoint('x'.repeat(EXCERPT_BYTES * 64));
    const agent = destinationAgent(large.url, 4);
    try {
      for (let i = 0; i < 3; i++) {
        const result = await send(request(large.url, agent));
        expect(result).toMatchObject({ status: 200, excerpt: 'x'.repeat(EXCERPT_BYTES) });
      }
      expect(large.connections()).toBe(3);
    } finally {
      agent.destroy();
    }
    const plain = await endpoint();
    for (let i = 0; i < 3; i++) expect(await send(request(plain.url))).toMatchObject({ status: 204 });
    expect(plain.connections()).toBe(3);
  });
});
