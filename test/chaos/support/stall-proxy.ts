import net from 'node:net';
import { findFreePort } from '@webhook-inbox/testing/embedded';

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  stalled: boolean;
}

/**
 * A TCP proxy in front of PostgreSQL whose open connections can be made to hang: `stall()` stops reading both
 * sides of every connection open now (the bytes wait in the kernel, as they would behind a network partition;
 * nothing is dropped and nothing is closed), while new connections go through. `resume()` lets the held bytes
 * flow again; `cutStalled()` resets the stalled connections instead, so the client has to reconnect.
 *
 * Unlike @webhook-inbox/testing's TcpProxy, whose black hole discards bytes (a connection that can never recover),
 * this one holds them, so the same connection can come back to life mid-transaction.
 */
export class StallProxy {
  readonly port: number;
  readonly #targetPort: number;
  readonly #pairs = new Set<Pair>();
  readonly #everPorts = new Set<number>();
  #server: net.Server | undefined;

  private constructor(port: number, targetPort: number) {
    this.port = port;
    this.#targetPort = targetPort;
  }

  static async start(target: string): Promise<StallProxy> {
    const proxy = new StallProxy(await findFreePort(), Number(new URL(target).port));
    const server = net.createServer((client) => proxy.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(proxy.port, '127.0.0.1', () => resolve());
    });
    proxy.#server = server;
    return proxy;
  }

  /** The same connection string, through the proxy. */
  url(target: string): string {
    const url = new URL(target);
    url.port = String(this.port);
    return url.toString();
  }

  #accept(client: net.Socket): void {
    const upstream = net.connect(this.#targetPort, '127.0.0.1');
    const pair: Pair = { client, upstream, stalled: false };
    upstream.once('connect', () => upstream.localPort && this.#everPorts.add(upstream.localPort));
    this.#pairs.add(pair);
    for (const socket of [client, upstream]) socket.on('error', () => {});
    client.on('data', (data: Buffer) => upstream.write(data));
    upstream.on('data', (data: Buffer) => client.write(data));
    const end = () => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
  }

  /** Local ports of the upstream connections (pg_stat_activity.client_port of the sessions behind the proxy). */
  sessionPorts(): number[] {
    return [...this.#pairs].flatMap(({ upstream }) => (upstream.localPort ? [upstream.localPort] : []));
  }

  /** Local ports of every upstream connection the proxy has made, open or closed since. */
  everPorts(): number[] {
    return [...this.#everPorts];
  }

  /** Every connection open now hangs, both ways. Returns how many. */
  stall(): number {
    for (const pair of this.#pairs) {
      pair.stalled = true;
      pair.client.pause();
      pair.upstream.pause();
    }
    return this.#pairs.size;
  }

  /** The stalled connections carry on where they stopped. */
  resume(): void {
    for (const pair of this.#pairs) {
      if (!pair.stalled) continue;
      pair.stalled = false;
      pair.client.resume();
      pair.upstream.resume();
    }
  }

  /** The stalled connections are reset (both sides): the client sees its connection die and must reconnect. */
  cutStalled(): number {
    let cut = 0;
    for (const pair of [...this.#pairs]) {
      if (!pair.stalled) continue;
      pair.client.resetAndDestroy();
      pair.upstream.destroy();
      cut++;
    }
    return cut;
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.#pairs) {
      client.destroy();
      upstream.destroy();
    }
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
