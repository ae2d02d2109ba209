import { createHmac, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { InvalidSignatureError, MissingSignatureError } from './errors.ts';
import {
  assertSecrets,
  assertTolerance,
  checkTimestamp,
  headerValue,
  hmacKey,
  parseUnixSeconds,
  toBytes,
} from './shared.ts';
import { anyKeyMatches, decodeSignature } from './signature-kernel.ts';
import { formPairs } from './template-body.ts';
import type { Coverage } from './template-rules.ts';
import { headerName, type TemplateSpec } from './template-schema.ts';
import { templateProvider } from './template-spec.ts';
import type { Provider, SignedRequest } from './types.ts';

export const HMAC_ALGORITHMS = ['sha1', 'sha256', 'sha512'] as const;
export const HMAC_ENCODINGS = ['hex', 'base64', 'base64url'] as const;
const PADDINGS = ['optional', 'canonical'] as const;
const PLACEHOLDERS = ['body', 'timestamp', 'id', 'url', 'form'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

export const hmacSpec = z
  .object({
    /** The header holding the signature(s). */
    header: headerName,
    algorithm: z.enum(HMAC_ALGORITHMS).default('sha256'),
    encoding: z.enum(HMAC_ENCODINGS).default('hex'),
    /** Before each signature, e.g. `sha256=` (GitHub) or `v0=` (Slack); a signature without it is ignored. */
    prefix: z.string().default(''),
    /**
     * Which base64 spellings of a signature match: `optional` (any trailing `=`, present or not: senders differ),
     * or `canonical` (exactly what the sender's encoder writes, so one signature has one spelling).
     */
    padding: z.enum(PADDINGS).optional(),
    /** Between several signatures in the header (e.g. `" "` or `","`); unset: the header is one signature. */
    separator: z.string().min(1).optional(),
    /**
     * What is signed: `{body}` (the raw bytes), or a template over `{timestamp}`, `{id}`, `{url}` (publicUrl plus
     * the request's query) and `{form}` (the form's fields sorted by name, each name then value: Twilio).
     */
    signed: z.string().default('{body}'),
    timestamp: z
      .object({ header: headerName, toleranceSeconds: z.int().positive().optional() })
      .strict()
      .optional(),
    id: z.object({ header: headerName }).strict().optional(),
  })
  .strict();
export type HmacSpec = z.output<typeof hmacSpec>;

type Part = { literal: string } | { placeholder: Placeholder };

/** The signed template's parts; throws a `TypeError` naming an unknown placeholder. */
export function signedParts(signed: string): Part[] {
  const parts: Part[] = [];
  for (const piece of signed.split(/(\{[a-z]+\})/)) {
    if (piece === '') continue;
    const match = /^\{([a-z]+)\}$/.exec(piece);
    if (!match) parts.push({ literal: piece });
    else if ((PLACEHOLDERS as readonly string[]).includes(match[1] as string))
      parts.push({ placeholder: match[1] as Placeholder });
    else throw new TypeError(`signed: unknown placeholder ${piece}; known: {${PLACEHOLDERS.join('}, {')}}`);
  }
  return parts;
}

/** The cross-field rules of an HMAC source (each placeholder needs what fills it), against the field to change. */
export function checkHmacRules(
  spec: HmacSpec,
  template: TemplateSpec,
  addIssue: (path: string[], message: string) => void,
) {
  let parts: Part[];
  try {
    parts = signedParts(spec.signed);
  } catch (error) {
    addIssue(['hmac', 'signed'], (error as Error).message.replace(/^signed: /, ''));
    return;
  }
  const uses = new Set(parts.flatMap((part) => ('placeholder' in part ? [part.placeholder] : [])));
  if (!uses.has('body') && !uses.has('form'))
    addIssue(['hmac', 'signed'], 'must cover the body: {body} or {form}');
  if (uses.has('timestamp') && !spec.timestamp) addIssue(['hmac', 'timestamp'], 'is required by {timestamp}');
  // A timestamp the signature does not cover protects against nothing: anyone can send a fresh one.
  if (spec.timestamp && !uses.has('timestamp')) {
    addIssue(
      ['hmac', 'signed'],
      'must contain {timestamp} when hmac.timestamp is set (else it is not signed)',
    );
  }
  if (uses.has('id') && !spec.id) addIssue(['hmac', 'id'], 'is required by {id}');
  if (uses.has('url') && !template.publicUrl) addIssue(['publicUrl'], 'is required by {url}');
  if (uses.has('form') && template.body !== 'form') addIssue(['body'], 'must be form for {form}');
}

/** What an HMAC source's signature covers: the body, and the id and timestamp headers its template names. */
export function hmacCoverage(spec: HmacSpec): Coverage {
  const headers: string[] = [];
  if (spec.id && spec.signed.includes('{id}')) headers.push(spec.id.header.toLowerCase());
  if (spec.timestamp && spec.signed.includes('{timestamp}'))
    headers.push(spec.timestamp.header.toLowerCase());
  return { kind: 'signature', headers, bodyOnly: spec.signed === '{body}' };
}

interface SigningValues {
  body: Uint8Array;
  timestamp?: string;
  id?: string;
  url?: string;
}

function digest(algorithm: string, key: KeyObject, parts: readonly Part[], values: SigningValues): Buffer {
  const hmac = createHmac(algorithm, key);
  for (const part of parts) {
    if ('literal' in part) hmac.update(part.literal, 'utf8');
    else if (part.placeholder === 'body') hmac.update(values.body);
    else if (part.placeholder === 'form') {
      const pairs = formPairs(Buffer.from(values.body).toString('utf8'));
      pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
      for (const [name, value] of pairs) hmac.update(name, 'utf8').update(value, 'utf8');
    } else hmac.update(values[part.placeholder] ?? '', 'utf8');
  }
  return hmac.digest();
}

/** The public URL a request was sent to: the configured one plus the request's query string. */
function publicUrlOf(publicUrl: string | undefined, request: SignedRequest): string {
  const url = request.url ?? '';
  const at = url.indexOf('?');
  return `${publicUrl ?? ''}${at === -1 ? '' : url.slice(at)}`;
}

export interface HmacProviderOptions {
  name: string;
  secrets: readonly string[];
  hmac: HmacSpec;
  template: TemplateSpec;
  /** The default tolerance of a signed timestamp (`hmac.timestamp.toleranceSeconds` overrides it). */
  toleranceSeconds: number;
}

/**
 * A sender that signs with an HMAC of the body (or of a template over timestamp, id, URL and body) in a header.
 * Every signature in the header is compared, in constant time, with each secret's; then a signed timestamp must
 * be within the tolerance either way. The event key and type are the template's (template-spec.ts).
 *
 * @example
 * const github = hmacProvider({ name: 'github', secrets, toleranceSeconds: 300, template,
 *   hmac: { header: 'X-Hub-Signature-256', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=', signed: '{body}' } });
 */
export function hmacProvider(options: HmacProviderOptions): Provider {
  const { name, hmac, template } = options;
  assertSecrets(name, options.secrets);
  const tolerance = hmac.timestamp?.toleranceSeconds ?? options.toleranceSeconds;
  assertTolerance(name, tolerance);
  const parts = signedParts(hmac.signed);
  const keys = options.secrets.map((secret) => hmacKey(secret));
  const length = createHmac(hmac.algorithm, 'x').digest().length;
  const header = hmac.header.toLowerCase();
  const padding = hmac.padding ?? 'optional';

  const authenticate = (request: SignedRequest, now: Date) => {
    const value = headerValue(request.header(header));
    if (value === undefined) throw new MissingSignatureError(`${name}: the ${hmac.header} header is absent`);
    const signatures: Buffer[] = [];
    for (const entry of hmac.separator === undefined ? [value] : value.split(hmac.separator)) {
      const text = entry.trim();
      if (!text.startsWith(hmac.prefix)) continue;
      const signature = decodeSignature(text.slice(hmac.prefix.length), hmac.encoding, length, padding);
      if (signature !== undefined) signatures.push(signature);
    }
    const values: SigningValues = { body: request.rawBody, url: publicUrlOf(template.publicUrl, request) };
    let timestamp: number | undefined;
    if (hmac.timestamp) {
      values.timestamp = headerValue(request.header(hmac.timestamp.header));
      timestamp = values.timestamp === undefined ? undefined : parseUnixSeconds(values.timestamp);
      if (timestamp === undefined) {
        throw new InvalidSignatureError(
          `${name}: the ${hmac.timestamp.header} header is absent or not unix seconds`,
        );
      }
    }
    if (hmac.id) {
      values.id = headerValue(request.header(hmac.id.header));
      if (values.id === undefined)
        throw new InvalidSignatureError(`${name}: the ${hmac.id.header} header is absent`);
    }
    if (!anyKeyMatches(keys, signatures, (key) => digest(hmac.algorithm, key, parts, values))) {
      throw new InvalidSignatureError(
        `${name}: no signature in ${hmac.header} matched any configured secret (${hmac.algorithm}, ${hmac.encoding}` +
          `${hmac.prefix ? `, prefix "${hmac.prefix}"` : ''}, over "${hmac.signed}"); is the body the raw bytes sent?`,
      );
    }
    if (timestamp !== undefined) checkTimestamp(name, timestamp, now, tolerance);
  };
  return templateProvider(name, template, options.secrets, authenticate, hmacCoverage(hmac));
}

export interface SignHmacOptions {
  hmac: HmacSpec;
  secret: string;
  payload: string | Uint8Array;
  /** Unix seconds, for `{timestamp}`; default now. */
  timestamp?: number;
  id?: string;
  /** The full public URL with its query, for `{url}`. */
  url?: string;
}

/**
 * The headers an HMAC source expects for this body (signature, and timestamp and id when signed), for tests and
 * the CLI's `send`.
 */
export function signHmac(options: SignHmacOptions): Record<string, string> {
  const { hmac } = options;
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const values: SigningValues = {
    body: toBytes(options.payload),
    timestamp,
    id: options.id,
    url: options.url,
  };
  const signature = digest(
    hmac.algorithm,
    hmacKey(options.secret),
    signedParts(hmac.signed),
    values,
  ).toString(hmac.encoding);
  const headers: Record<string, string> = { [hmac.header]: `${hmac.prefix}${signature}` };
  if (hmac.timestamp) headers[hmac.timestamp.header] = timestamp;
  if (hmac.id && options.id !== undefined) headers[hmac.id.header] = options.id;
  return headers;
}
