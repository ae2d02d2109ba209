import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { InvalidPayloadError, InvalidSignatureError, MissingSignatureError } from './errors.ts';
import { readPointer } from './pointer.ts';
import { scalarText } from './template-body.ts';
import type { HttpAnswer, SignedRequest } from './types.ts';

// The handshakes providers send to prove an endpoint is theirs before (and while) they deliver events. Each is
// answered by the receiver and never recorded. A handshake the provider signs (Slack, Zoom, Discord, and Graph
// through the source's own API key) is answered only after the source's authentication passed; the two `GET`
// handshakes carry no signature. Meta's echoes the challenge only for the verify token (compared in constant
// time). X's CRC answers, to anyone, the HMAC-SHA256 of the token under the secret that also signs X's bodies: it
// is a signing oracle for every token it accepts, so it accepts only X's kind of token, which no body the source
// records can be (`crcToken`), and a source may have it only where that holds (template-rules.ts).

export const HANDSHAKES = ['slack', 'zoom', 'meta', 'discord', 'graph', 'crc'] as const;
export type HandshakeType = (typeof HANDSHAKES)[number];

export const handshakeSpec = z
  .object({
    type: z.enum(HANDSHAKES, { error: `must be one of ${HANDSHAKES.join(', ')}` }),
    /** Meta: the verify token you typed into the app dashboard. */
    verifyToken: z.string().min(1).optional(),
  })
  .strict()
  .refine((spec) => spec.type !== 'meta' || spec.verifyToken !== undefined, {
    error: 'meta needs verifyToken (the token typed into the app dashboard)',
    path: ['verifyToken'],
  });
export type HandshakeSpec = z.output<typeof handshakeSpec>;

export interface Handshake {
  readonly type: HandshakeType;
  readonly acceptsGet: boolean;
  /** An answer to a request no signature covers, or `undefined` when the request is not this handshake. */
  beforeAuthentication?(request: SignedRequest): HttpAnswer | undefined;
  /** An answer to an authenticated request, or `undefined` when it is an ordinary delivery. */
  afterAuthentication?(request: SignedRequest, body: () => unknown): HttpAnswer | undefined;
}

const JSON_TYPE = 'application/json';
const TEXT_TYPE = 'text/plain; charset=utf-8';
/** A challenge longer than this is not a provider's: nobody is echoed a megabyte. */
const MAX_CHALLENGE = 1024;

function queryOf(request: SignedRequest): URLSearchParams {
  const url = request.url ?? '';
  const at = url.indexOf('?');
  return new URLSearchParams(at === -1 ? '' : url.slice(at + 1));
}

/** A value to echo (a challenge, a token): a non-empty string of at most MAX_CHALLENGE characters, or `invalid_payload`. */
export function challengeText(name: string, value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_CHALLENGE) {
    throw new InvalidPayloadError(`${name}: the ${what} is absent, empty or longer than ${MAX_CHALLENGE}`);
  }
  return value;
}

/**
 * X's crc_token: an opaque random token of base64 or base64url characters, tens of them. Its answer is the
 * signature X would send for a body of exactly these bytes; a body the source records is JSON, and this charset
 * and the JSON check leave no token that parses as JSON (a number, `true`, `false`, `null`; objects, arrays and
 * strings need characters outside it).
 */
const CRC_TOKEN = /^[A-Za-z0-9+/_=-]{8,255}$/;

/** A crc_token X could have sent, or `invalid_payload`: never one whose answer signs a recordable body. */
export function crcToken(name: string, value: string | null): string {
  if (value === null || !CRC_TOKEN.test(value) || parsesAsJson(value)) {
    throw new InvalidPayloadError(
      `${name}: crc_token is absent or not X's (8 to 255 base64 or base64url characters, not JSON)`,
    );
  }
  return value;
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const field = (value: unknown, ...path: string[]) => readPointer(value, path);
/** A verify token as it is compared: hashed, so the comparison is constant-time whatever the lengths. */
export const verifyTokenHash = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Meta's subscription GET, for a source's `meta` handshake and the catalogue's `meta` type: the `hub.challenge` to
 * echo when `hub.mode` is `subscribe` and `hub.verify_token` is the configured token (`expected`, its
 * `verifyTokenHash`); refused otherwise.
 */
export function metaSubscriptionChallenge(name: string, request: SignedRequest, expected: Buffer): string {
  const query = queryOf(request);
  if (query.get('hub.mode') !== 'subscribe') {
    throw new InvalidPayloadError(`${name}: a GET must be hub.mode=subscribe`);
  }
  const token = query.get('hub.verify_token');
  if (token === null) throw new MissingSignatureError(`${name}: hub.verify_token is absent`);
  if (!timingSafeEqual(verifyTokenHash(token), expected)) {
    throw new InvalidSignatureError(`${name}: hub.verify_token is not the configured verify token`);
  }
  return challengeText(name, query.get('hub.challenge'), 'hub.challenge');
}

/**
 * Zoom's answer to `endpoint.url_validation`, for a source's `zoom` handshake and the catalogue's `zoom` type: the
 * plain token and its hex HMAC-SHA256 under the Secret Token (the current one during a rotation).
 */
export function zoomValidation(name: string, plainToken: unknown, secret: string): HttpAnswer {
  const token = challengeText(name, plainToken, 'payload.plainToken');
  const encryptedToken = createHmac('sha256', secret).update(token).digest('hex');
  return { status: 200, contentType: JSON_TYPE, body: JSON.stringify({ plainToken: token, encryptedToken }) };
}

/** The handshake of a source: `secrets[0]` keys Zoom's and X's answers (the current secret during a rotation). */
export function createHandshake(name: string, spec: HandshakeSpec, secrets: readonly string[]): Handshake {
  const secret = secrets[0] ?? '';
  switch (spec.type) {
    case 'slack':
      return {
        type: 'slack',
        acceptsGet: false,
        afterAuthentication: (_request, body) =>
          field(body(), 'type') === 'url_verification'
            ? {
                status: 200,
                contentType: TEXT_TYPE,
                body: challengeText(name, field(body(), 'challenge'), 'challenge'),
              }
            : undefined,
      };
    case 'zoom':
      return {
        type: 'zoom',
        acceptsGet: false,
        afterAuthentication: (_request, body) => {
          if (field(body(), 'event') !== 'endpoint.url_validation') return undefined;
          return zoomValidation(name, field(body(), 'payload', 'plainToken'), secret);
        },
      };
    case 'discord':
      return {
        type: 'discord',
        acceptsGet: false,
        afterAuthentication: (_request, body) =>
          scalarText(field(body(), 'type')) === '1'
            ? { status: 200, contentType: JSON_TYPE, body: '{"type":1}' }
            : undefined,
      };
    case 'graph':
      return {
        type: 'graph',
        acceptsGet: false,
        afterAuthentication: (request) => {
          const token = queryOf(request).get('validationToken');
          return token === null
            ? undefined
            : { status: 200, contentType: TEXT_TYPE, body: challengeText(name, token, 'validationToken') };
        },
      };
    case 'meta': {
      const expected = verifyTokenHash(spec.verifyToken ?? '');
      return {
        type: 'meta',
        acceptsGet: true,
        beforeAuthentication: (request) =>
          request.method === 'GET'
            ? {
                status: 200,
                contentType: TEXT_TYPE,
                body: metaSubscriptionChallenge(name, request, expected),
              }
            : undefined,
      };
    }
    case 'crc':
      return {
        type: 'crc',
        acceptsGet: true,
        beforeAuthentication: (request) => {
          if (request.method !== 'GET') return undefined;
          const token = crcToken(name, queryOf(request).get('crc_token'));
          const responseToken = `sha256=${createHmac('sha256', secret).update(token).digest('base64')}`;
          return {
            status: 200,
            contentType: JSON_TYPE,
            body: JSON.stringify({ response_token: responseToken }),
          };
        },
      };
  }
}
