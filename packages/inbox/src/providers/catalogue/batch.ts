import { createHash } from 'node:crypto';
import { InvalidPayloadError } from '../../errors.ts';
import { rawJson } from '../../json.ts';
import { bodyText } from '../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../types.ts';

/**
 * A provider whose deliveries carry several events (HubSpot, SendGrid). `verifyBatch` checks the signature once
 * and returns one event per item, each with its own key, for the sources framework's batch path. `verify` (the
 * `Provider` interface) returns a one-item delivery as that item, and a larger one as a single event of type
 * `batch` keyed by a hash of its items' keys, so a receiver without the batch path still deduplicates a
 * redelivered batch whole.
 */
export interface BatchProvider extends Provider {
  verifyBatch(request: SignedRequest, now: Date): VerifiedEvent[];
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
export function jsonArrayItems(name: string, rawBody: Uint8Array): { text: string; items: BatchItem[] } {
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
  const items = parsed.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new InvalidPayloadError(`${name}: item #${index + 1} of the batch is not an object`);
    }
    return { object: item as Record<string, unknown>, text: JSON.stringify(item) };
  });
  return { text, items };
}

/** The whole delivery as one event, for `verify`: a lone item as itself, several under a key hashed from theirs. */
export function batchAsOneEvent(events: readonly VerifiedEvent[], payloadText: string): VerifiedEvent {
  const [first] = events;
  if (first === undefined) throw new InvalidPayloadError('a batch delivery has no events');
  if (events.length === 1) return first;
  const keys = events.map((event) => event.eventId).sort();
  const hash = createHash('sha256').update(keys.join('\n')).digest('hex');
  return { provider: first.provider, eventId: `batch:${hash}`, type: 'batch', payloadText, headers: {} };
}

/** A batch provider from its `verifyBatch`: `verify` gives the same delivery as one event (`batchAsOneEvent`). */
export function batchProvider(
  name: string,
  verifyBatch: (request: SignedRequest, now: Date) => VerifiedEvent[],
): BatchProvider {
  return {
    name,
    verifyBatch,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const events = verifyBatch(request, now);
      return batchAsOneEvent(events, jsonArrayItems(name, request.rawBody).text);
    },
  };
}
