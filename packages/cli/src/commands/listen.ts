/**
 * `webhook-inbox listen --forward-to <local URL>`: a remote inbox's events, as the token may see them, forwarded
 * to a local endpoint, each signed with Standard Webhooks under a listen secret printed at start (docs/cli.md#listen).
 *
 * The server keeps the position: the CLI starts a listener, long-polls its next events, forwards each, and
 * acknowledges them before asking for more. A dropped connection loses nothing: the events not acknowledged are
 * sent again, those acknowledged never are (the acknowledgements that did not get through are sent again first).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { send, signDelivery } from '@webhook-inbox/inbox/destinations';
import type { CliContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import { adminRequest, RemoteError, UnreachableError, type AdminApi } from '../remote.ts';

export interface ListenOptions {
  forwardTo: string;
  group?: string;
  /** Comma-separated type patterns (`invoice.*,customer.created`). */
  events?: string;
  body: 'envelope' | 'raw';
  /** A `whsec_` secret to sign with; else `WEBHOOK_INBOX_LISTEN_SECRET`, else a new one. */
  secret?: string;
  url?: string;
  token?: string;
}

interface Listener {
  id: string;
  since: string;
}

interface ListenedEvent {
  provider: string;
  key: string;
  type: string;
  id: string;
  body: string;
}

/** How long a poll waits for an event on the server; the request's own timeout leaves room beside it. */
const POLL_WAIT_SECONDS = 25;
const POLL_TIMEOUT_MS = (POLL_WAIT_SECONDS + 15) * 1000;
/** A forwarded request's answer is waited for this long. */
const FORWARD_TIMEOUT_MS = 30_000;
/** The waits between tries of an unreachable admin API or local endpoint, the last one repeated. */
const BACKOFF_MS = [500, 1000, 2000, 5000];
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

export async function listen(context: CliContext, options: ListenOptions): Promise<void> {
  const api = context.adminApi(options);
  if (!api)
    throw new UsageError('listen streams a remote inbox: give --url and --token (or WEBHOOK_INBOX_TOKEN)');
  const target = forwardTarget(options.forwardTo);
  const secret = options.secret ?? context.listenSecret() ?? `whsec_${randomBytes(24).toString('base64')}`;
  if (!SECRET.test(secret))
    throw new UsageError('--secret must be a Standard Webhooks secret: whsec_ and base64');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');

  const listener = await adminRequest<Listener>(api, 'POST', '/listeners', {
    ...(options.group === undefined ? {} : { group: options.group }),
    types: patterns(options.events),
    body: options.body,
  });
  const stopping = new AbortController();
  const stop = () => {
    if (stopping.signal.aborted) process.exit(130);
    out('stopping (Ctrl-C again to quit at once)');
    stopping.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  out(`Ready! Your webhook signing secret is ${secret}`);
  out(`listener ${listener.id}: forwarding events received since ${listener.since} to ${target.href}`);
  const stream = new Stream(api, listener.id, stopping.signal);
  let forwarded = 0;
  try {
    while (!stopping.signal.aborted) {
      const events = await stream.next();
      for (const event of events) {
        if (stopping.signal.aborted) break;
        if (await forward(target, key, event, stopping.signal)) {
          stream.acknowledged(event);
          forwarded++;
        }
      }
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  await stream.close();
  out(`stopped: ${forwarded} events forwarded`);
}

/**
 * The listener's events, resumed across dropped connections: each `next()` first sends the acknowledgements not
 * yet received, then long-polls; an unreachable API (or a 5xx, a 429) is tried again with a backoff, printed once
 * per outage.
 */
class Stream {
  #pending: { provider: string; key: string }[] = [];
  #outage = false;

  readonly #api: AdminApi;
  readonly #id: string;
  readonly #signal: AbortSignal;

  constructor(api: AdminApi, id: string, signal: AbortSignal) {
    this.#api = api;
    this.#id = id;
    this.#signal = signal;
  }

  acknowledged(event: ListenedEvent): void {
    this.#pending.push({ provider: event.provider, key: event.key });
  }

  /** The next events; none once stopping. */
  async next(): Promise<ListenedEvent[]> {
    for (let attempt = 0; !this.#signal.aborted; attempt++) {
      try {
        await this.#flush(this.#signal);
        const { events } = await adminRequest<{ events: ListenedEvent[] }>(
          this.#api,
          'GET',
          `/listeners/${this.#id}/events?wait=${POLL_WAIT_SECONDS}`,
          undefined,
          { timeoutMs: POLL_TIMEOUT_MS, signal: this.#signal },
        );
        if (this.#outage) out('reconnected: resuming from the last acknowledged event');
        this.#outage = false;
        return events;
      } catch (error) {
        if (this.#signal.aborted) return [];
        if (!retryable(error)) throw error;
        if (!this.#outage)
          warn(`connection to ${this.#api.url} lost (${(error as Error).message}): retrying`);
        this.#outage = true;
        await pause(attempt, this.#signal);
      }
    }
    return [];
  }

  /** On the way out: the last acknowledgements, then the listener deleted; a failure is reported, not fatal. */
  async close(): Promise<void> {
    const quick = AbortSignal.timeout(10_000);
    try {
      await this.#flush(quick);
      await adminRequest(this.#api, 'DELETE', `/listeners/${this.#id}`, undefined, { signal: quick });
    } catch (error) {
      warn(
        `could not stop listener ${this.#id} cleanly (${(error as Error).message}); it expires after a day`,
      );
    }
  }

  async #flush(signal: AbortSignal): Promise<void> {
    if (this.#pending.length === 0) return;
    const events = this.#pending;
    await adminRequest(this.#api, 'POST', `/listeners/${this.#id}/acks`, { events }, { signal });
    this.#pending = this.#pending.slice(events.length);
  }
}

/**
 * POSTs one event to the local endpoint, signed now. Any answer counts as forwarded (printed with its status, as
 * `stripe listen` does); no answer (the local server down, a timeout) is tried again until one comes or the CLI
 * stops. True when forwarded.
 */
async function forward(
  target: URL,
  key: Buffer,
  event: ListenedEvent,
  signal: AbortSignal,
): Promise<boolean> {
  out(`--> ${event.provider} ${event.type} [${event.key}]`);
  for (let attempt = 0; !signal.aborted; attempt++) {
    const result = await send({
      url: target,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'webhook-inbox listen',
        ...signDelivery(event.id, new Date(), event.body, [key]),
      },
      body: event.body,
      timeoutMs: FORWARD_TIMEOUT_MS,
      allowPrivateNetwork: true,
    });
    if (result.kind === 'answer') {
      const line = `<-- [${result.status}] POST ${target.href} [${event.key}]`;
      if (result.status >= 200 && result.status < 300) out(line);
      else warn(line);
      return true;
    }
    if (attempt === 0)
      warn(`${target.href} did not answer (${result.error.message}): retrying [${event.key}]`);
    await pause(attempt, signal);
  }
  return false;
}

function forwardTarget(value: string): URL {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new UsageError(`--forward-to ${value} is not an http(s) URL`);
  }
  return new URL(value);
}

function patterns(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((pattern) => pattern.trim())
    .filter(Boolean);
}

function retryable(error: unknown): boolean {
  if (error instanceof UnreachableError) return true;
  return (
    error instanceof RemoteError &&
    error.status !== undefined &&
    (error.status >= 500 || error.status === 429)
  );
}

async function pause(attempt: number, signal: AbortSignal): Promise<void> {
  const ms = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;
  await delay(ms, undefined, { signal }).catch(() => {});
}

const stamp = () => new Date().toISOString().replace('T', ' ').slice(0, 19);
const out = (line: string) => process.stdout.write(`${stamp()}  ${line}\n`);
const warn = (line: string) => process.stderr.write(`${stamp()}  ${line}\n`);
