import { eventFilter, eventPayloads, Params, type Statement } from '@webhook-inbox/inbox/sql';

/**
 * Statements on `listeners` and `listener_acks`: the `webhook-inbox listen` sessions of the admin API
 * (`listen.ts`), and the events each one's client acknowledged. A listener's position is the set of events it
 * acknowledged, not a point in the event log: a transaction that started first (its `received_at` earlier) may
 * commit last, so an event can appear behind one already sent; it is still unacknowledged, so it is sent.
 */

export type ListenBody = 'envelope' | 'raw';

export interface ListenerRow {
  id: string;
  actor: string;
  groups: string[] | null;
  types: string[];
  body: ListenBody;
  /** Microsecond UTC text: the events received at or after it are streamed. */
  since: string;
}

const COLUMNS = `id, actor, groups, types, body,
  to_char(since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as since`;

/** A listener unused this long is deleted (with its acknowledgements) when the next one is created. */
export const LISTENER_IDLE_LIMIT = '1 day';

export interface NewListener {
  actor: string;
  groups: readonly string[] | null;
  types: readonly string[];
  body: ListenBody;
  address: string | null;
}

export function insertListener(listener: NewListener): Statement {
  return {
    text: `insert into listeners (actor, groups, types, body, remote_address)
           values ($1, $2::text[], $3::text[], $4, $5)
           returning ${COLUMNS}`,
    values: [listener.actor, listener.groups, listener.types, listener.body, listener.address],
  };
}

/** Listeners no client polled for `LISTENER_IDLE_LIMIT`; their acknowledgements go with them (cascade). */
export function deleteIdleListeners(): Statement {
  return {
    text: `delete from listeners where seen_at < now() - interval '${LISTENER_IDLE_LIMIT}'`,
    values: [],
  };
}

/** The listener, marked seen now; no row when there is none (never created, deleted, or idle too long). */
export function touchListener(id: string): Statement {
  return {
    text: `update listeners set seen_at = now()
            where id = $1 and seen_at >= now() - interval '${LISTENER_IDLE_LIMIT}'
            returning ${COLUMNS}`,
    values: [id],
  };
}

export function deleteListener(id: string): Statement {
  return { text: 'delete from listeners where id = $1 returning id', values: [id] };
}

/** Records that the listener's client forwarded these events; acknowledging one twice changes nothing. */
export function insertAcks(id: string, events: readonly (readonly [string, string])[]): Statement {
  return {
    text: `insert into listener_acks (listener_id, provider, event_id)
           select $1, * from unnest($2::text[], $3::text[])
           on conflict do nothing`,
    values: [id, events.map(([provider]) => provider), events.map(([, eventId]) => eventId)],
  };
}

export interface ListenedEventRow {
  provider: string;
  eventId: string;
  type: string;
  receivedAt: Date;
  /** The payload's JSON text (every digit of a large integer kept); null when retention purged it. */
  payload: string | null;
}

/**
 * The listener's next `limit` events, oldest first: received since it started, of the types its groups route
 * (`visibleTo`) and its patterns match, and not acknowledged.
 */
export function nextEvents(listener: ListenerRow, limit: number): Statement {
  const params = new Params();
  const clauses = eventFilter.where(
    { typePatterns: listener.types, visibleTo: listener.groups ?? undefined },
    params,
  );
  const id = params.add(listener.id);
  clauses.push(
    `received_at >= ${params.add(listener.since)}::timestamptz`,
    `not exists (select from listener_acks a
                  where a.listener_id = ${id} and a.provider = webhook_events.provider
                    and a.event_id = webhook_events.event_id)`,
  );
  return {
    text: `select provider, event_id as "eventId", type, received_at as "receivedAt",
                  ${eventPayloads.payloadOf('webhook_events', 'p.payload::text')} as payload
             from webhook_events
            where ${clauses.join(' and ')}
            order by received_at, provider, event_id
            limit ${params.add(limit)}`,
    values: params.values,
  };
}
