import { InvalidPayloadError } from '../errors.ts';
import { rawJson } from '../json.ts';
import { bodyText } from '../shared.ts';
import type { HttpAnswer, Provider, Reception, SignedRequest, VerifiedEvent } from '../types.ts';

/**
 * A provider whose deliveries carry several events (SendGrid, HubSpot, Adyen, Meta). `verifyBatch` checks the
 * signature once and returns one event per item, each under its own key; `receive` gives them to the receiver,
 * which records every item as its own row, all of one request in one transaction (`batchProvider`).
 */
export interface BatchProvider extends Provider {
  verifyBatch(request: SignedRequest, now: Date): VerifiedEvent[];
  receive(request: SignedRequest, now: Date): Reception;
}

/** One item of a JSON array body: its parsed object and its text (large integers kept digit for digit). */
export interface BatchItem {
  object: Record<string, unknown>;
  text: string;
}

/**
 * The items of an authentic JSON array body. Integers beyond 2^53 are kept as written (`JSON.rawJSON`), so an
 * item's text says what the sender sent even though it is serialized again.
 */
export function jsonArrayItems(name: string, rawBody: Uint8Array): BatchItem[] {
  const text = bodyText(name, rawBody);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && context?.source
        ? rawJson(context.source)
        : value,
    );
  } catch (error) {
    throw new InvalidPayloadError(`${name}: the body is not valid JSON`, { cause: error });
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new InvalidPayloadError(`${name}: the body is not a non-empty JSON array of events`);
  }
  return parsed.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new InvalidPayloadError(`${name}: item #${index + 1} of the batch is not an object`);
    }
    return { object: item as Record<string, unknown>, text: JSON.stringify(item) };
  });
}

/** What a batch source has besides its items: a fixed acknowledgement, a handshake answered before them. */
export interface BatchOptions {
  /** The answer once every item is recorded (Adyen's `[accepted]`); unset: the receiver's JSON counts. */
  response?: HttpAnswer;
  /** A request answered without events (Meta's GET subscription), or `undefined` for a delivery of items. */
  handshake?: (request: SignedRequest, now: Date) => Reception | undefined;
}

/**
 * A batch source from its `verifyBatch`. `receive` hands the receiver every item as its own event (`batch: true`:
 * recorded in one transaction, answered as one request). `verify`, for a caller that records one event per
 * request, gives a one-item delivery's event and refuses a larger one as `invalid_payload`: a batch never becomes
 * one event, whose key would change whenever an item is added and run the known items' effects again.
 */
export function batchProvider(
  name: string,
  verifyBatch: (request: SignedRequest, now: Date) => VerifiedEvent[],
  options: BatchOptions = {},
): BatchProvider {
  const { handshake, response } = options;
  return {
    name,
    batches: true,
    verifyBatch,
    receive: (request, now) =>
      handshake?.(request, now) ?? { kind: 'events', events: verifyBatch(request, now), batch: true },
    ...(handshake && { acceptsGet: true }),
    ...(response && { response }),
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const events = verifyBatch(request, now);
      const [only] = events;
      if (only === undefined || events.length !== 1) {
        throw new InvalidPayloadError(
          `${name}: the request holds ${events.length} events; a batch is received with receive(), one event per item`,
        );
      }
      return only;
    },
  };
}
