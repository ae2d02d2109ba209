import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InvalidPayloadError } from './errors.ts';
import { handshakeSpec, createHandshake, type HandshakeSpec } from './handshakes.ts';
import { headerValue } from './shared.ts';
import { templateIssues, type Coverage } from './template-rules.ts';
import {
  decodeForm,
  decodeJson,
  jsonText,
  pointerTokens,
  readPointer,
  scalarText,
  type DecodedBody,
} from './template-body.ts';
import type { HttpAnswer, Provider, Reception, SignedRequest, VerifiedEvent } from './types.ts';

// What every template source (hmac, basic-auth, api-key, ed25519) shares: where its event key and type come
// from, how its body is read (JSON or form, one event or a batch), its handshake and its acknowledgement. Each
// template module adds only how a request is authenticated.

/** An HTTP header name (RFC 9110 token). */
export const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { error: 'must be an HTTP header name' });

/** An RFC 6901 JSON pointer: `""` (the whole value) or `/a/b/0`. */
export const jsonPointer = z.string().superRefine((pointer, ctx) => {
  try {
    pointerTokens(pointer);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const exactlyOne = (fields: readonly string[]) => (value: object) =>
  fields.filter((field) => (value as Record<string, unknown>)[field] !== undefined).length === 1;

const eventKeySpec = z
  .object({
    header: headerName.optional(),
    /** One pointer, or several whose values are joined with `:` (e.g. Adyen's event code and PSP reference). */
    pointer: z.union([jsonPointer, z.array(jsonPointer).min(1)]).optional(),
    bodyHash: z.literal(true).optional(),
  })
  .strict()
  .refine(exactlyOne(['header', 'pointer', 'bodyHash']), {
    error: 'must have exactly one of header, pointer or bodyHash: true',
  });

const eventTypeSpec = z
  .object({
    header: headerName.optional(),
    pointer: jsonPointer.optional(),
    constant: z.string().min(1).max(255).optional(),
  })
  .strict()
  .refine(exactlyOne(['header', 'pointer', 'constant']), {
    error: 'must have exactly one of header, pointer or constant',
  });

const responseSpec = z
  .object({
    status: z.int().min(200).max(299).default(200),
    body: z.string().max(4096).default(''),
    contentType: z.string().min(1).default('text/plain; charset=utf-8'),
  })
  .strict();

/** The options every template source takes besides its own authentication block. */
export const templateFields = {
  /** Where each event's key comes from: required (`checkTemplate`), `bodyHash` only when chosen. */
  eventKey: eventKeySpec.optional(),
  eventType: eventTypeSpec.default({ constant: 'webhook' }),
  body: z.enum(['json', 'form']).default('json'),
  /** Form fields holding JSON (Slack's `payload`): parsed, so pointers reach inside. */
  formJsonFields: z.array(z.string().min(1)).default([]),
  /** Where a batch's events are (`""`: the body is the array); eventKey and eventType then point into each. */
  batch: z.object({ items: jsonPointer }).strict().optional(),
  handshake: handshakeSpec.optional(),
  response: responseSpec.optional(),
  /** The URL the sender posts to, as it sees it (behind a proxy): what `{url}` in a signed template is. */
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
};

export const templateSpec = z.object(templateFields);
export type TemplateSpec = z.output<typeof templateSpec>;

/** The cross-field rules of a template source (template-rules.ts), reported against the field to change. */
export function checkTemplate(spec: TemplateSpec, ctx: z.RefinementCtx, coverage: Coverage): void {
  for (const { path, message } of templateIssues(spec, coverage))
    ctx.addIssue({ code: 'custom', path, message });
}

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
