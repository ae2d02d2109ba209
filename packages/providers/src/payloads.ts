/**
 * The shape of an event as a handler receives it, and the payload types by provider that the typed modules
 * (`./types/*.ts`) fill by declaration merging. Types only: `@webhook-inbox/inbox`'s effects read them from here.
 */

/** What every event carries, whatever its provider. */
export interface InboxEventBase {
  provider: string;
  /** The event key (Stripe `evt_...`; Shopify `shop:topic:id`). */
  eventId: string;
  type: string;
  /** The delivery headers the receiver kept (lower-case names), never signatures. */
  headers: Readonly<Record<string, string>>;
  receivedAt: Date;
  /** The body as JSON, integers beyond 2^53 as `bigint`. */
  payload: unknown;
}

/**
 * Payload types by provider and event type: `{ github: { 'pull_request.opened': PullRequestOpened, ... } }`.
 * Empty here, so that this module names no optional type package; each typed provider's module
 * (`@webhook-inbox/providers/github`, `.../slack`, `.../paddle`, `.../square`) adds its provider by
 * declaration merging, from the type package a team installs with it. A team that imports none of them gets `unknown` payloads.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ProviderPayloads {}

/** A provider whose payloads are typed, once its module is imported. */
export type TypedProvider = Extract<keyof ProviderPayloads, string>;

/** The event types of a typed provider. */
export type TypedEventType<P extends TypedProvider> = Extract<keyof ProviderPayloads[P], string>;

/** An event of a typed provider; for a union of types, a union of events that `event.type` narrows. */
export type TypedInboxEvent<
  P extends TypedProvider,
  T extends TypedEventType<P> = TypedEventType<P>,
> = T extends string ? TypedEventOf<P, T> : never;

export interface TypedEventOf<P extends TypedProvider, T extends TypedEventType<P>> extends InboxEventBase {
  provider: P;
  type: T;
  payload: ProviderPayloads[P][T];
}
