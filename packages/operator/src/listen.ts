/**
 * `webhook-inbox listen`'s server side: a listener streams the events a principal may see to its client, which
 * forwards each to a local URL and acknowledges it. The server keeps the position (the events acknowledged, in
 * `listener_acks`), so a client that lost its connection asks again and gets every event it has not acknowledged,
 * none it has. The client signs what it forwards (the listen secret never leaves it); the server hands it each
 * event's body and its stable `webhook-id`.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { eventIdempotencyKey } from '@webhook-inbox/inbox';
import { bodyOf } from '@webhook-inbox/inbox/destinations';
import { CodedError } from '@webhook-inbox/inbox/errors';
import { inTransaction } from '@webhook-inbox/inbox/transaction';
import type { Principal } from './access/roles.ts';
import { auditLog, listeners } from './sql/index.ts';
import type { ListenBody, ListenedEventRow, ListenerRow } from './sql/listeners.ts';

export type { ListenBody, ListenerRow };

/** The scope of a listened event's `webhook-id`: the same for every listener, every resend. */
const LISTEN_KEY_SCOPE = 'listen';
/** How often a waiting poll looks for new events (the receiver sends no NOTIFY: see the inbox's queue.ts). */
const POLL_INTERVAL_MS = 250;

/** No listener with this id is the principal's (never created, stopped, idle for a day, or another's). */
export class ListenError extends CodedError<'unknown_listener'> {
  override name = 'ListenError';
}

export interface ListenOptions {
  /** The consumer groups whose event types it streams; null: every event. */
  groups: readonly string[] | null;
  /** Type patterns (`invoice.*`); empty: every type. */
  types: readonly string[];
  body: ListenBody;
}

/** One event as a listener's client forwards it. */
export interface ListenedEvent {
  provider: string;
  /** The event key. */
  key: string;
  type: string;
  receivedAt: string;
  /** The `webhook-id` to send: stable per event. */
  id: string;
  /** The request body to send, exactly (JSON text; an integer past 2^53 keeps its digits). */
  body: string;
}

/**
 * Creates a listener for `principal`, streaming the events received from now on; deletes the listeners idle for a
 * day. Audited (`listen_started`) in the same transaction.
 */
export async function startListener(
  pool: pg.Pool,
  principal: Principal,
  options: ListenOptions,
): Promise<ListenerRow> {
  return inTransaction(pool, async (client) => {
    await client.query(listeners.deleteIdleListeners());
    const {
      rows: [row],
    } = await client.query<ListenerRow>(
      listeners.insertListener({ ...options, actor: principal.actor, address: principal.address }),
    );
    if (!row) throw new Error('insert into listeners returned no row');
    await client.query(
      auditLog.insertAudit(principal, {
        action: 'listen_started',
        target: `listener ${row.id}`,
        details: { groups: options.groups, types: options.types, body: options.body },
      }),
    );
    return row;
  });
}

/**
 * The listener's next events (at most `limit`, oldest first), waiting up to `waitMs` for one to arrive; an empty
 * list when none did or `signal` aborted (the client went away).
 */
export async function nextListened(
  pool: pg.Pool,
  principal: Principal,
  id: string,
  wait: { limit: number; waitMs: number; signal?: AbortSignal },
): Promise<ListenedEvent[]> {
  const listener = await ownListener(pool, principal, id);
  const deadline = Date.now() + wait.waitMs;
  for (;;) {
    const { rows } = await pool.query<ListenedEventRow>(listeners.nextEvents(listener, wait.limit));
    const left = deadline - Date.now();
    if (rows.length > 0 || left <= 0 || wait.signal?.aborted) {
      return rows.map((row) => listened(listener, row));
    }
    try {
      await delay(Math.min(POLL_INTERVAL_MS, left), undefined, { signal: wait.signal });
    } catch {
      return [];
    }
  }
}

/** Records that the client forwarded these events (`[provider, key]`): they are never sent to it again. */
export async function acknowledge(
  pool: pg.Pool,
  principal: Principal,
  id: string,
  events: readonly (readonly [string, string])[],
): Promise<number> {
  await ownListener(pool, principal, id);
  const { rowCount } = await pool.query(listeners.insertAcks(id, events));
  return rowCount ?? 0;
}

/** Deletes the listener and its acknowledgements; audited (`listen_stopped`). */
export async function stopListener(pool: pg.Pool, principal: Principal, id: string): Promise<void> {
  await ownListener(pool, principal, id);
  await inTransaction(pool, async (client) => {
    await client.query(listeners.deleteListener(id));
    await client.query(
      auditLog.insertAudit(principal, { action: 'listen_stopped', target: `listener ${id}` }),
    );
  });
}

/** The listener `id`, marked seen, when it is `principal`'s; otherwise 404 `unknown_listener`, whoever's it is. */
async function ownListener(pool: pg.Pool, principal: Principal, id: string): Promise<ListenerRow> {
  const {
    rows: [row],
  } = await pool.query<ListenerRow>(listeners.touchListener(id));
  if (!row || row.actor !== principal.actor) {
    throw new ListenError(
      'unknown_listener',
      `no listener ${id} of yours: it was stopped, idle for a day, or never created; start listening again`,
    );
  }
  return row;
}

function listened(listener: ListenerRow, row: ListenedEventRow): ListenedEvent {
  const id = eventIdempotencyKey(row.provider, row.eventId, LISTEN_KEY_SCOPE);
  return {
    provider: row.provider,
    key: row.eventId,
    type: row.type,
    receivedAt: row.receivedAt.toISOString(),
    id,
    body: bodyOf({ body: listener.body }, { provider: row.provider, eventId: row.eventId }, id, {
      type: row.type,
      receivedAt: row.receivedAt,
      payload: row.payload ?? 'null',
    }),
  };
}
