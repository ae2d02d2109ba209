import { createHash } from 'node:crypto';
import { InvalidPayloadError } from './errors.ts';
import { createHandshake, type HandshakeSpec } from './handshakes.ts';
import { headerValue } from './shared.ts';
import { keyHeadersOf, templateIssues, type Coverage } from './template-rules.ts';
import type { TemplateSpec } from './template-schema.ts';
import { pointerTokens, readPointer, type Pointer } from './pointer.ts';
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
  const keyOf = compileKey(name, spec);
  const typeOf = compileType(name, spec.eventType);
  const batchTokens = spec.batch === undefined ? undefined : pointerTokens(spec.batch.items);
  const handshake = spec.handshake === undefined ? undefined : createHandshake(name, spec.handshake, secrets);
  const decode = (request: SignedRequest): DecodedBody =>
    spec.body === 'form'
      ? decodeForm(name, request.rawBody, spec.formJsonFields)
      : decodeJson(name, request.rawBody);

  const keep = keptHeaders(spec);
  const eventOf = (
    request: SignedRequest,
    read: Read,
    payloadText: string,
    body?: Readonly<Record<string, unknown>>,
  ): VerifiedEvent => {
    const eventId = keyOf(request, read, payloadText);
    const type = typeOf(request, read);
    const headers: Record<string, string> = {};
    for (const header of keep) {
      const value = headerValue(request.header(header));
      if (value !== undefined) headers[header] = value;
    }
    return { provider: name, eventId, type, payloadText, headers, ...(body !== undefined && { body }) };
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
    const decodedBody = body();
    if (batchTokens === undefined) {
      const event = eventOf(
        request,
        eventReader(decodedBody),
        decodedBody.payloadText,
        objectOf(decodedBody),
      );
      return { kind: 'events', events: [event] };
    }
    const items = readPointer(decodedBody.value, batchTokens);
    if (!Array.isArray(items)) {
      throw new InvalidPayloadError(`${name}: the body has no array at ${JSON.stringify(spec.batch?.items)}`);
    }
    return {
      kind: 'events',
      batch: true,
      events: items.map((item) => eventOf(request, (tokens) => readPointer(item, tokens), jsonText(item))),
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

/** The value at a pointer into one event (its numbers as `rawJson`, so `scalarText` gives their digits). */
type Read = (tokens: Pointer) => unknown;

/**
 * One event's reader over a body: the plain parse first, the lossless one only where a number is read (its
 * digits as written, past 2^53 too); a form's fields as they are.
 */
function eventReader(decoded: DecodedBody): Read {
  const plain = decoded.plain;
  if (plain === undefined) return (tokens) => readPointer(decoded.value, tokens);
  return (tokens) => {
    const value = readPointer(plain(), tokens);
    return typeof value === 'number' ? readPointer(decoded.value, tokens) : value;
  };
}

/** The body an event carries for the subject (`VerifiedEvent.body`): a JSON object's plain parse, else none. */
function objectOf(decoded: DecodedBody): Readonly<Record<string, unknown>> | undefined {
  const value = decoded.plain?.();
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The delivery headers an event keeps (lower-case): `keepHeaders`, else those its key and type are read from. */
function keptHeaders(spec: TemplateSpec): readonly string[] {
  const read = [
    ...keyHeadersOf(spec),
    ...(spec.eventType.header === undefined ? [] : [spec.eventType.header]),
  ];
  return [...new Set((spec.keepHeaders ?? read).map((header) => header.toLowerCase()))];
}

type KeyReader = (request: SignedRequest, read: Read, payloadText: string) => string;

function compileKey(name: string, spec: TemplateSpec): KeyReader {
  const key = spec.eventKey;
  const headers = keyHeadersOf(spec);
  if (headers.length > 0) {
    const what = headers.length === 1 ? 'the event key' : 'part of the event key';
    const lower = headers.map((header) => header.toLowerCase());
    return (request) =>
      lower
        .map((header, index) => {
          const part = headerValue(request.header(header));
          if (part === undefined) {
            throw new InvalidPayloadError(`${name}: the ${headers[index]} header (${what}) is absent`);
          }
          return part;
        })
        .join(':');
  }
  if (key?.pointer !== undefined) {
    const pointers = typeof key.pointer === 'string' ? [key.pointer] : key.pointer;
    const tokens = pointers.map(pointerTokens);
    return (_request, read) =>
      tokens
        .map((path, index) => {
          const part = scalarText(read(path));
          if (part === undefined) {
            throw new InvalidPayloadError(
              `${name}: the event has no string or number at ${JSON.stringify(pointers[index])} (its event key)`,
            );
          }
          return part;
        })
        .join(':');
  }
  return (_request, _read, payloadText) => `sha256:${createHash('sha256').update(payloadText).digest('hex')}`;
}

function compileType(
  name: string,
  spec: TemplateSpec['eventType'],
): (request: SignedRequest, read: Read) => string {
  if (spec.constant !== undefined) {
    const constant = spec.constant;
    return () => constant;
  }
  const base = typeBase(spec);
  const absent = (): string => {
    if (spec.required !== true) return 'unknown';
    const where =
      spec.header !== undefined
        ? `the ${spec.header} header`
        : `no string or number at ${JSON.stringify(spec.pointer)}`;
    throw new InvalidPayloadError(
      spec.header !== undefined
        ? `${name}: ${where} (the event type) is absent`
        : `${name}: the event has ${where} (its event type)`,
    );
  };
  const suffix = spec.suffix === undefined ? undefined : pointerTokens(spec.suffix);
  return (request, read) => {
    const type = base(request, read);
    if (type === undefined) return absent();
    const detail = suffix === undefined ? undefined : read(suffix);
    return typeof detail === 'string' && detail !== '' ? `${type}.${detail}` : type;
  };
}

/** Where a type is read from: its header's value, or the scalar at its pointer; `undefined` when absent. */
function typeBase(
  spec: TemplateSpec['eventType'],
): (request: SignedRequest, read: Read) => string | undefined {
  if (spec.header !== undefined) {
    const header = spec.header.toLowerCase();
    return (request) => headerValue(request.header(header));
  }
  const tokens = pointerTokens(spec.pointer ?? '');
  return (_request, read) => scalarText(read(tokens));
}

export type { HandshakeSpec };
