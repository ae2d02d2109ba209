/**
 * The console's test stack: a pool, a pg-boss sender with the queues configured, a real inbox worker running a
 * test effect that fails until the test lets it pass, and the console served over real HTTP. Not a test file.
 */
import { breakGlassSession, loginNonce } from '@webhook-inbox/testing/console';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import {
  configureQueues,
  createInbox,
  DEFAULT_QUEUE_SETTINGS,
  external,
  ingest,
  type InboxWorker,
  type QueueSettings,
} from '@webhook-inbox/inbox';
// Types `on('stripe', ...)` by Stripe's events.
import type {} from '@webhook-inbox/inbox/stripe';
import { insertEvents, startTestBoss } from '@webhook-inbox/testing';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { pino } from 'pino';
import { createDestinations, parseDestinations } from '@webhook-inbox/inbox/destinations';
import { createConsole, type Console, type ConsoleOptions } from '../src/index.ts';

export const ADMIN_TOKEN = 'console-test-admin-token-0123456789';

/**
 * A failed event stays `failed` until someone replays it: the retry is an hour away. The worker's own retry can
 * therefore never be what turns an effect completed in these tests.
 */
export const SLOW_RETRIES: QueueSettings = {
  ...DEFAULT_QUEUE_SETTINGS,
  retryLimit: 3,
  retryDelay: 3600,
  retryDelayMax: 3600,
  retryBackoff: false,
  expireInSeconds: 30,
};

/** The downstream of the test effect `notifyCrm`: down until a test brings it up. */
export interface Downstream {
  up: boolean;
  calls: number;
}

export interface Stack {
  pool: pg.Pool;
  boss: PgBoss;
  console: Console;
  /** The console's base URL, e.g. http://127.0.0.1:41234/console */
  url: string;
  downstream: Downstream;
  /** Records and enqueues an event as the receiver does. */
  send(eventId: string, payloadText?: string, type?: string): Promise<string>;
  startWorker(): Promise<void>;
  stop(): Promise<void>;
}

export const EVENT_TYPE = 'checkout.session.completed';
export const EFFECTS = ['recordOrder', 'notifyCrm'] as const;
/** A type whose one effect, `sendWelcomeEmail`, runs once per customer (a scoped key), whichever event asks. */
export const SCOPED_TYPE = 'customer.subscription.created';

export async function startStack(
  databaseUrl: string,
  options: Partial<Omit<ConsoleOptions, 'pool' | 'boss' | 'logger' | 'adminToken'>> & {
    worker?: boolean;
    /** The console's connections (default 8): a race test gives it enough for requests to overlap. */
    poolSize?: number;
  } = {},
): Promise<Stack> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 8 });
  const boss = await startTestBoss(databaseUrl);
  await configureQueues(boss, SLOW_RETRIES);

  const downstream: Downstream = { up: false, calls: 0 };
  const inbox = createInbox()
    .on('stripe', EVENT_TYPE, {
      recordOrder: () => {},
      notifyCrm: () => {
        downstream.calls++;
        if (!downstream.up) throw new Error('CRM unavailable (503)');
      },
    })
    .on('stripe', SCOPED_TYPE, {
      sendWelcomeEmail: external({
        scope: (event) => {
          const { customer } = event.payload.data.object;
          return `account:${typeof customer === 'string' ? customer : (customer?.id ?? '')}`;
        },
        run: () => {},
      }),
    });
  const logger = pino({ level: 'silent' });
  const console = createConsole({
    pool,
    boss,
    adminToken: ADMIN_TOKEN,
    logger,
    effectsFor: (provider, type) => inbox.effectsFor(provider, type),
    operations: { pollIntervalMs: 100 },
    ...options,
  });
  console.start();
  const server = await new Promise<Server>((resolve) => {
    const s: ServerType = serve({ fetch: console.app.fetch, port: 0, hostname: '127.0.0.1' }, () =>
      resolve(s as Server),
    );
  });
  const { port } = server.address() as AddressInfo;

  let worker: InboxWorker | undefined;
  return {
    pool,
    boss,
    console,
    url: `http://127.0.0.1:${port}${options.basePath ?? '/console'}`,
    downstream,
    send: (eventId, payloadText = '{}', type = EVENT_TYPE) =>
      ingest(
        { pool, boss },
        { provider: 'stripe', eventId, type, payloadText, headers: { 'stripe-event-type': type } },
      ),
    async startWorker() {
      worker ??= await inbox.start({
        connectionString: databaseUrl,
        queue: SLOW_RETRIES,
        poolSize: 4,
        batchSize: 100,
        pollingIntervalSeconds: 0.5,
      });
    },
    async stop() {
      await console.stop();
      await worker?.stop({ timeoutMs: 5000 });
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await boss.stop({ graceful: false, close: true });
      await pool.end();
    },
  };
}

/**
 * Failed events written straight into the table (as a worker would have left them): `count` of them, received
 * one millisecond apart an hour ago, ids `${prefix}_00001`..., with `data.object.customer` = `customer`.
 */
export async function insertFailedEvents(
  pool: pg.Pool,
  prefix: string,
  count: number,
  customer = 'cus_bulk',
): Promise<void> {
  await insertEvents(
    pool,
    `insert into webhook_events (provider, event_id, type, status, attempts, last_error, received_at)
     select 'stripe', $1 || '_' || lpad(i::text, 5, '0'), $3,
            'failed', 1, 'CRM unavailable (503)', now() - interval '1 hour' + i * interval '1 millisecond'
       from generate_series(1, $2::int) as i`,
    [prefix, count, EVENT_TYPE],
    `jsonb_build_object('id', e.event_id, 'data', jsonb_build_object('object', jsonb_build_object('customer', $3::text)))`,
    [customer],
  );
}

/** A cookie jar of one session for fetch: signs in and keeps the session cookie and the page's CSRF token. */
export interface Client {
  cookie: string;
  csrf: string;
  get(path: string, init?: RequestInit): Promise<Response>;
  post(path: string, form: Record<string, string>, init?: RequestInit): Promise<Response>;
}

export { loginNonce };

/** The audit actor of a break-glass sign-in from this machine. */
export const BREAK_GLASS_ACTOR = 'break-glass@127.0.0.1';

/** Signs in with the break-glass admin token; `note` is what the operator types as the reason. */
export async function login(url: string, note = 'test'): Promise<Client> {
  return sessionClient(url, await breakGlassSession(url, ADMIN_TOKEN, note));
}

/** A client of the session `cookie` (`wi_console_session=...`), with the CSRF token its overview page carries. */
export async function sessionClient(url: string, cookie: string): Promise<Client> {
  const overview = await fetch(`${url}/`, { headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await overview.text())?.[1];
  if (!csrf) throw new Error(`no CSRF token on the overview (${overview.status})`);
  const client: Client = {
    cookie,
    csrf,
    get: (path, init = {}) =>
      fetch(`${url}${path}`, {
        redirect: 'manual',
        ...init,
        headers: { cookie, accept: 'text/html', ...init.headers },
      }),
    post: (path, form, init = {}) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        ...init,
        headers: { cookie, accept: 'text/html', ...init.headers },
        body: new URLSearchParams(form),
      }),
  };
  return client;
}

/** The billing team's worker delivering to the destinations of `yaml` (a destinations file's text). */
export interface BillingDestinations {
  stop(): Promise<void>;
}

/**
 * Starts what a billing worker with a destinations file runs: the destinations of `yaml` registered on an inbox of
 * group `billing`, its worker, and their delivery queues, polling every 0.5 s.
 */
export async function startBillingDestinations(
  databaseUrl: string,
  yaml: string,
): Promise<BillingDestinations> {
  const destinations = createDestinations({
    connectionString: databaseUrl,
    destinations: parseDestinations(yaml, 'destinations.yaml'),
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  const inbox = createInbox();
  destinations.register(inbox);
  await destinations.start();
  const worker = await inbox.start({
    connectionString: databaseUrl,
    group: 'billing',
    queue: SLOW_RETRIES,
    poolSize: 4,
    pollingIntervalSeconds: 0.5,
  });
  await destinations.work();
  return {
    async stop() {
      await destinations.stop({ timeoutMs: 5_000 });
      await worker.stop({ timeoutMs: 5_000 });
    },
  };
}
