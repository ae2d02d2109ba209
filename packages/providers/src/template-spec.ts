import { createHash } from 'node:crypto';
import { InvalidPayloadError } from './errors.ts';
import { createHandshake, type HandshakeSpec } from './handshakes.ts';
import { headerValue } from './shared.ts';
import { templateIssues, type Coverage } from './template-rules.ts';
import type { TemplateSpec } from './template-schema.ts';
import { pointerTokens, readPointer } from './pointer.ts';
import { decodeForm, decodeJson, jsonText, scalarText, type DecodedBody } from './template-body.ts';
import type { HttpAnswer, Provider, Reception, SignedRequest, VerifiedEvent } from './types.ts';

/** Authenticates a request (throws `missing_signature`, `invalid_signature`, `timestamp_out_of_tolerance`). */
export type Authenticate = (request: SignedRequest, now: Date) => void;

/**
 * A template source as a `Provider`: handshakes that need no authentication (a `GET` challenge) first, then
 * `authenticate` (which proves what `coverage` says), then a signed handshake, then the body's events. `verify` is for sources whose every request
 * is exactly one event; the receiver calls `receive`.
 */
export function templateProvider(
  name: string,
  spec: TemplateSpec,
  secrets: readonly string[],
  authenticate: Authenticate,
  coverage: Coverage,
): Provider {
  const [issue] = templateIssues(spec, coverage);
  if (issue !== undefined) throw new TypeError(`${name}: ${issue.path.join('.')}: ${issue.message}`);
  if (spec.eventKey === undefined) throw new TypeError(`${name}: eventKey is required`);
  const keyOf = compileKey(name, spec.eventKey);
  const typeOf = compileType(spec.eventType);
  const batchTokens = spec.batch === undefined ? undefined : pointerTokens(spec.batch.items);
  const handshake = spec.handshake === undefined ? undefined : createHandshake(name, spec.handshake, secrets);
  const decode = (request: SignedRequest): DecodedBody =>
    spec.body === 'form'
      ? decodeForm(name, request.rawBody, spec.formJsonFields)
      : decodeJson(name, request.rawBody);

  const eventOf = (request: SignedRequest, value: unknown, payloadText: string): VerifiedEvent => {
    const headers: Record<string, string> = {};
    const eventId = keyOf(request, value, payloadText, headers);
    return { provider: name, eventId, type: typeOf(request, value, headers), payloadText, headers };
  };

  const receive = (request: SignedRequest, now: Date): Reception => {
    const unsigned = handshake?.beforeAuthentication?.(request);
    if (unsigned !== undefined) return answer(unsigned, handshake);
    if ((request.method ?? 'POST') !== 'POST') {
      throw new InvalidPayloadError(`${name}: ${request.method} is not a handshake this source answers`);
    }
    authenticate(request, now);
    let decoded: DecodedBody | undefined;
    const body = () => (decoded ??= decode(request));
    const signed = handshake?.afterAuthentication?.(request, () => body().value);
    if (signed !== undefined) return answer(signed, handshake);
    const { value, payloadText } = body();
    if (batchTokens === undefined) return { kind: 'events', events: [eventOf(request, value, payloadText)] };
    const items = readPointer(value, batchTokens);
    if (!Array.isArray(items)) {
      throw new InvalidPayloadError(`${name}: the body has no array at ${JSON.stringify(spec.batch?.items)}`);
    }
    return {
      kind: 'events',
      batch: true,
      events: items.map((item) => eventOf(request, item, jsonText(item))),
    };
  };

  return {
    name,
    receive,
    batches: batchTokens !== undefined,
    acceptsGet: handshake?.acceptsGet ?? false,
    response: spec.response,
    verify(request, now) {
      const reception = receive(request, now);
      if (reception.kind !== 'events' || reception.events.length !== 1) {
        throw new InvalidPayloadError(`${name}: the request is not exactly one event`);
      }
      return reception.events[0] as VerifiedEvent;
    },
  };
}

function answer(answer: HttpAnswer, handshake: { type: string } | undefined): Reception {
  return { kind: 'handshake', handshake: handshake?.type ?? 'unknown', answer };
}

type KeyReader = (
  request: SignedRequest,
  value: unknown,
  payloadText: string,
  kept: Record<string, string>,
) => string;

function compileKey(name: string, spec: NonNullable<TemplateSpec['eventKey']>): KeyReader {
  if (spec.header !== undefined) {
    const header = spec.header.toLowerCase();
    return (request, _value, _text, kept) => {
      const key = headerValue(request.header(header));
      if (key === undefined) {
        throw new InvalidPayloadError(`${name}: the ${spec.header} header (the event key) is absent`);
      }
      kept[header] = key;
      return key;
    };
  }
  if (spec.pointer !== undefined) {
    const pointers = typeof spec.pointer === 'string' ? [spec.pointer] : spec.pointer;
    const tokens = pointers.map(pointerTokens);
    return (_request, value) =>
      tokens
        .map((path, index) => {
          const part = scalarText(readPointer(value, path));
          if (part === undefined) {
            throw new InvalidPayloadError(
              `${name}: the event has no string or number at ${JSON.stringify(pointers[index])} (its event key)`,
            );
          }
          return part;
        })
        .join(':');
  }
  return (_request, _value, payloadText) =>
    `sha256:${createHash('sha256').update(payloadText).digest('hex')}`;
}

function compileType(
  spec: TemplateSpec['eventType'],
): (request: SignedRequest, value: unknown, kept: Record<string, string>) => string {
  if (spec.constant !== undefined) {
    const constant = spec.constant;
    return () => constant;
  }
  if (spec.header !== undefined) {
    const header = spec.header.toLowerCase();
    return (request, _value, kept) => {
      const type = headerValue(request.header(header));
      if (type !== undefined) kept[header] = type;
      return type ?? 'unknown';
    };
  }
  const tokens = pointerTokens(spec.pointer ?? '');
  return (_request, value) => scalarText(readPointer(value, tokens)) ?? 'unknown';
}

export type { HandshakeSpec };
