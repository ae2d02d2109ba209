/** What a provider's `verify` receives: the exact bytes on the wire and the request headers. */
export interface SignedRequest {
  rawBody: Uint8Array;
  /** Header lookup by name, case-insensitive (e.g. `(name) => request.headers.get(name)`). */
  header(name: string): string | null | undefined;
  /** `GET` or `POST`; unset means `POST` (the only method a provider without `receive` is given). */
  method?: string;
  /** The request's path and query as received (`/webhooks/x?a=b`): query-parameter keys, handshakes, URL signing. */
  url?: string;
}

/** An authentic event, ready to be recorded. */
export interface VerifiedEvent {
  /** The provider's name as configured (`stripe`, `shopify`, or a Standard Webhooks name). */
  provider: string;
  /**
   * The catalogue type of a source named otherwise (`github` for a source `github-acme`): what its subject is read
   * by. Unset: the name is the type. Never stored.
   */
  sourceType?: string;
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
  /**
   * The body as the provider parsed it while verifying, where it did: the subject is read from it at ingest, so
   * the receiver parses a body once. Never stored (`payloadText` is) and never relied on: absent, the text is parsed.
   */
  body?: Readonly<Record<string, unknown>>;
}

/**
 * One webhook sender. `verify` checks the signature over the raw bytes before anything is parsed, then
 * extracts the event key; it throws a `WebhookError` subclass for every refusal and never anything else.
 */
export interface Provider {
  readonly name: string;
  verify(request: SignedRequest, now: Date): VerifiedEvent;
  /**
   * Present on sources that can do more than one event per request: a batch (every event of the request, recorded
   * together or not at all), or a handshake the receiver answers without recording anything. The receiver calls
   * it instead of `verify` when present; it throws as `verify` does.
   */
  receive?(request: SignedRequest, now: Date): Reception;
  /**
   * Present on sources whose verification needs I/O: the signing certificate named inside the message (AWS SNS,
   * PayPal). The receiver awaits it instead of calling `receive` or `verify`, which such a source cannot answer
   * and refuses; the synchronous sources leave it unset, so their path has no promise in it.
   */
  receiveAsync?(request: SignedRequest, now: Date): Promise<Reception>;
  /**
   * Whether a request may carry many events (a batch, given by `receive`): the receiver reads its body up to the
   * batch body limit rather than the single-event one.
   */
  readonly batches?: boolean;
  /** Whether `receive` answers `GET` requests (a provider's subscription handshake); unset: POST only. */
  readonly acceptsGet?: boolean;
  /** The answer once the request's events are recorded; unset: 200 with the receiver's JSON. */
  readonly response?: HttpAnswer;
  /**
   * The status of a signature refusal (`missing_signature`, `invalid_signature`, `timestamp_out_of_tolerance`)
   * when the sender requires one other than 400: Discord saves an interactions URL only if its deliberately bad
   * signatures get a 401.
   */
  readonly signatureRefusalStatus?: 401;
  /**
   * Set on sources that compare a presented secret as it is (an API key, Basic credentials): each refused request
   * is one guess of the secret, so the receiver bounds them per client (429 `too_many_attempts` past the limit).
   */
  readonly guessable?: true;
}

/** A fixed HTTP answer: a handshake's, or a source's acknowledgement of recorded events. */
export interface HttpAnswer {
  status: number;
  body: string;
  contentType: string;
}

/** What one request to a source holds: events to record (possibly none, possibly many), or a handshake. */
export type Reception =
  /** `batch`: a batch delivery, answered as one whatever its number of events (one, many, none). */
  | { kind: 'events'; events: VerifiedEvent[]; batch?: boolean }
  | { kind: 'handshake'; handshake: string; answer: HttpAnswer };
