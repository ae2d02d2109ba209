import { z } from 'zod';
import { handshakeSpec } from './handshakes.ts';
import { pointerTokens } from './pointer.ts';

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
    /** One header, or several whose values are joined with `:` (WooCommerce's store, webhook and delivery). */
    header: z.union([headerName, z.array(headerName).min(1)]).optional(),
    /** One pointer, or several whose values are joined with `:` (e.g. Adyen's event code and PSP reference). */
    pointer: z.union([jsonPointer, z.array(jsonPointer).min(1)]).optional(),
    bodyHash: z.literal(true).optional(),
    /**
     * A key header the signature does not cover, chosen knowing what it costs (GitHub's `X-GitHub-Delivery`): a
     * captured delivery posted again under another value of it is a new event (template-rules.ts).
     */
    unsigned: z.literal(true).optional(),
  })
  .strict()
  .refine(exactlyOne(['header', 'pointer', 'bodyHash']), {
    error: 'must have exactly one of header, pointer or bodyHash: true',
  })
  .refine((key) => key.unsigned === undefined || key.header !== undefined, {
    error: 'unsigned: true is for a header key only',
    path: ['unsigned'],
  });

const eventTypeSpec = z
  .object({
    header: headerName.optional(),
    pointer: jsonPointer.optional(),
    constant: z.string().min(1).max(255).optional(),
    /** An absent header or pointer refuses the delivery (`invalid_payload`) rather than typing it `unknown`. */
    required: z.literal(true).optional(),
    /**
     * A pointer into the body whose non-empty string is appended after a `.` (GitHub's `pull_request` and
     * `/action` make `pull_request.opened`); absent, the type is left as it is.
     */
    suffix: jsonPointer.optional(),
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
  /**
   * The delivery headers kept with each event (stored beside its payload), exactly these; unset: the headers the
   * event key and type are read from.
   */
  keepHeaders: z.array(headerName).optional(),
  /** Where a batch's events are (`""`: the body is the array); eventKey and eventType then point into each. */
  batch: z.object({ items: jsonPointer }).strict().optional(),
  handshake: handshakeSpec.optional(),
  response: responseSpec.optional(),
  /** The URL the sender posts to, as it sees it (behind a proxy): what `{url}` in a signed template is. */
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
};

export const templateSpec = z.object(templateFields);
export type TemplateSpec = z.output<typeof templateSpec>;
