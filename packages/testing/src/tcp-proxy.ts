import net from 'node:net';
import { findFreePort } from './embedded-postgres.ts';

/**
 * A TCP proxy in front of PostgreSQL for fault tests: `cut()` resets every connection and refuses new ones
 * (the database is gone), `blackhole()` keeps connections open but forwards nothing either way (a network
 * partition: queries hang, nothing is closed), `restore()` undoes both for new connections. `hang()` stalls
 * one session's connection only; `retarget()` sends new connections to another server.
 */
export class TcpProxy {
  readonly port: number;
  #targetPort: number;
  readonly #sockets = new Set<net.Socket>();
  /** Upstream socket -> the client socket it serves. */
  readonly #clientOf = new Map<net.Socket, net.Socket>();
  /** Sockets whose connection forwards nothing any more (`hang`). */
  readonly #hung = new WeakSet<net.Socket>();
  #server: net.Server | undefined;
  #blackholed = false;

  private constructor(port: number, targetPort: number) {
    this.port = port;
    this.#targetPort = targetPort;
  }

  static async start(target: string): Promise<TcpProxy> {
    const proxy = new TcpProxy(await findFreePort(), Number(new URL(target).port));
    await proxy.restore();
    return proxy;
  }

  /** The same connection string, through the proxy. */
  url(target: string): string {
    const url = new URL(target);
    url.port = String(this.port);
    return url.toString();
  }

  /** Accepts and forwards again. A connection black-holed before lost bytes: it is of no use any more. */
  async restore(): Promise<void> {
    this.#blackholed = false;
    if (this.#server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.#targetPort, '127.0.0.1');
      this.#clientOf.set(upstream, client);
      upstream.on('close', () => this.#clientOf.delete(upstream));
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {});
      }
      const forward = (from: net.Socket, to: net.Socket) =>
        from.on('data', (data: Buffer) => {
          if (!this.#blackholed && !this.#hung.has(from)) to.write(data);
        });
      forward(client, upstream);
      forward(upstream, client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.#server = server;
  }

  /**
   * New connections go to another server from now on (a cloud endpoint moved to a promoted replica); open ones
   * stay where they are.
   */
  retarget(target: string): void {
    this.#targetPort = Number(new URL(target).port);
  }

  /** Every connection reset, new ones refused. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Connections stay open (new ones too) but no byte gets through, either way. */
  blackhole(): void {
    this.#blackholed = true;
  }

  /**
   * The connection of one PostgreSQL session stops forwarding, both ways, for good: nothing is closed, queries
   * on it get no answer, as behind a network partition; other connections carry on. When the client gives up
   * and closes it, the session ends too (its transaction rolls back, its locks go). `sessionPort` is the
   * session's `inet_client_port()` (the proxy's side of it). False if no such connection is open.
   */
  hang(sessionPort: number): boolean {
    for (const [upstream, client] of this.#clientOf) {
      if (upstream.localPort !== sessionPort) continue;
      this.#hung.add(upstream);
      this.#hung.add(client);
      return true;
    }
    return false;
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
