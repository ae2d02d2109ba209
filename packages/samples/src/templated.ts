import { randomUUID } from 'node:crypto';
import {
  signHmac,
  signStandardWebhook,
  sourcesFileSpec,
  type CatalogueEntry,
  type SignedRequest,
} from '@webhook-inbox/providers';
import { pointerTokens } from '@webhook-inbox/providers/pointer';
import { JSON_TYPE, seconds, split, type CatalogueDelivery, type DeliveryBuilder } from './shared.ts';

// The sample delivery of a catalogue provider declared as a template, built from the declaration itself: the
// module's `sample` body, the event key and type put where the template reads them (a header, or a JSON pointer into
// the body), signed as the template verifies. A provider added as a template module needs nothing written here.

/** A catalogue entry declared as a template. */
type TemplatedEntry = CatalogueEntry & { template: NonNullable<CatalogueEntry['template']> };

/** The type a templated provider's samples default to when its module declares no `sample`. */
const DEFAULT_SAMPLE_TYPE = 'sample.created';

/** The builder of `entry`'s deliveries; throws a TypeError naming the type when its template has no generic sample. */
export function templatedBuilder(entry: TemplatedEntry): DeliveryBuilder {
  return {
    type: entry.sample?.type ?? DEFAULT_SAMPLE_TYPE,
    build(input) {
      const source = sourcesFileSpec.parse({
        sources: { [entry.type]: { ...entry.template, secrets: [input.secret] } },
      }).sources[entry.type]!;
      const id = randomUUID();
      const timestamp = seconds(input.now);
      const body: Record<string, unknown> = structuredClone(entry.sample?.body ?? {});
      const headers: Record<string, string> = { ...JSON_TYPE };

      if (source.type === 'standard-webhooks') {
        const payload = input.payload ?? JSON.stringify({ type: input.type, ...body });
        Object.assign(headers, {
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signStandardWebhook({ id, payload, secret: input.secret, timestamp }),
        });
        return verified(entry, input, { body: payload, headers, type: input.type });
      }
      if (!('hmac' in source) || source.body !== 'json' || source.batch) {
        throw new TypeError(
          `${entry.type}: no sample is built from its template (an hmac scheme over a JSON body, one event a ` +
            'request, is); write its builder in @webhook-inbox/samples',
        );
      }
      // The key: the id, or a part of it per header or pointer (the template joins them with ':'), or the body's
      // hash (nothing to put).
      const key = source.eventKey;
      const parts = (at: string | string[]): Array<[string, string]> =>
        (Array.isArray(at) ? at : [at]).map((where, i, all) => [
          where,
          all.length === 1 ? id : `${id}-${i + 1}`,
        ]);
      for (const [name, part] of key?.header === undefined ? [] : parts(key.header)) headers[name] = part;
      for (const [at, part] of key?.pointer === undefined ? [] : parts(key.pointer))
        setPointer(body, at, part);
      // The type: where it is read, with its suffix's part (`issue` and `/action`: `created`) where one is.
      const { eventType } = source;
      const [base, action] = eventType.suffix ? split(input.type) : [input.type, undefined];
      if (eventType.header !== undefined) headers[eventType.header] = base;
      if (eventType.pointer !== undefined) setPointer(body, eventType.pointer, base);
      if (eventType.suffix !== undefined && action !== undefined) setPointer(body, eventType.suffix, action);

      const payload = input.payload ?? JSON.stringify(body);
      const signedId = source.hmac.id ? (headers[source.hmac.id.header] ?? id) : undefined;
      Object.assign(
        headers,
        signHmac({
          hmac: source.hmac,
          secret: input.secret,
          payload,
          timestamp,
          id: signedId,
          url: input.url,
        }),
      );
      return verified(entry, input, { body: payload, headers, type: input.type });
    },
  };
}

/**
 * The delivery with the key and type its own provider reads from it: the receiver records exactly these. A
 * caller's `payload` the provider refuses (no key where the template reads one) is sent as it is, its key unknown.
 */
function verified(
  entry: TemplatedEntry,
  input: { secret: string; now: Date; payload?: string | undefined },
  delivery: { body: string; headers: Record<string, string>; type: string },
): CatalogueDelivery {
  const headers = new Headers(delivery.headers);
  const request: SignedRequest = {
    rawBody: Buffer.from(delivery.body),
    header: (name) => headers.get(name),
    method: 'POST',
  };
  try {
    const event = entry.create({ secrets: [input.secret] }).verify(request, input.now);
    return { ...delivery, key: event.eventId, type: event.type };
  } catch (error) {
    if (input.payload !== undefined) return { ...delivery, key: undefined };
    throw new TypeError(`${entry.type}: its template refuses its own sample: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Sets the value at an RFC 6901 pointer (`/a/b`), making the objects on the way. */
function setPointer(target: Record<string, unknown>, pointer: string, value: unknown): void {
  const tokens = pointerTokens(pointer);
  let at = target;
  for (const token of tokens.slice(0, -1)) {
    const next = at[token];
    at = (typeof next === 'object' && next !== null ? next : (at[token] = {})) as Record<string, unknown>;
  }
  const last = tokens.at(-1);
  if (last !== undefined) at[last] = value;
}
