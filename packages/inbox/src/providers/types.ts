/** What a provider's `verify` receives: the exact bytes on the wire and the request headers. */
export interface SignedRequest {
  rawBody: Uint8Array;
  /** Header lookup by name, case-insensitive (e.g. `(name) => request.headers.get(name)`). */
  header(name: string): string | null | undefined;
}

/** An authentic event, ready to be recorded. */
export interface VerifiedEvent {
  /** The provider's name as configured (`stripe`, `shopify`, or a Standard Webhooks name). */
  provider: string;
  /** The event key, unique per provider: what redeliveries of one event share. */
  eventId: string;
  /** Event type or topic, e.g. `checkout.session.completed`, `orders/create`. */
  type: string;
  /**
   * The body as received, as text: stored as jsonb by Postgres, which keeps every digit of numbers that a
   * JS number would round (Shopify ids exceed 2^53).
   */
  payloadText: string;
  /** Delivery metadata worth keeping (topic, shop domain, webhook id, triggered-at); never signatures. */
  headers: Record<string, string>;
}

/**
 * One webhook sender. `verify` checks the signature over the raw bytes before anything is parsed, then
 * extracts the event key; it throws a `WebhookError` subclass for every refusal and never anything else.
 */
export interface Provider {
  readonly name: string;
  verify(request: SignedRequest, now: Date): VerifiedEvent;
}
