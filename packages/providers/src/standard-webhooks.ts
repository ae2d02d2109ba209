import type { KeyObject } from 'node:crypto';
import { InvalidSignatureError, MissingSignatureError } from './errors.ts';
import {
  assertSecrets,
  assertTolerance,
  bytesEqual,
  checkTimestamp,
  decodeBase64Sha256,
  decodeJsonBody,
  headerValue,
  hmacKey,
  hmacSha256,
  parseUnixSeconds,
  toBytes,
  unixSeconds,
} from './shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from './types.ts';

export interface StandardWebhooksProviderOptions {
  /** The provider's name, also its URL segment (`/webhooks/<name>`): lower-case letters, digits and `-`. */
  name: string;
  /** `whsec_<base64>` secrets (the prefix is optional); more than one during a rotation. Any may match. */
  secrets: readonly string[];
  /** Maximum age (and future skew) of the signed timestamp, in seconds; must be > 0. */
  toleranceSeconds: number;
}

/** What a Standard Webhooks provider may be called: it becomes a URL segment. */
export const PROVIDER_NAME = /^[a-z0-9-]+$/;

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Svix, which the standard came from, sends the same headers as `svix-*`; either name is accepted. */
function webhookHeader(request: SignedRequest, name: string): string | undefined {
  return headerValue(request.header(`webhook-${name}`)) ?? headerValue(request.header(`svix-${name}`));
}

/** The HMAC key of a `whsec_<base64>` secret: the base64-decoded bytes after the prefix. */
function secretKey(provider: string, secret: string, index: number): KeyObject {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = BASE64.test(encoded) && encoded.length % 4 !== 1 ? Buffer.from(encoded, 'base64') : undefined;
  if (key === undefined || key.length === 0) {
    throw new TypeError(`${provider}: secret #${index + 1} is not "whsec_" followed by base64`);
  }
  return hmacKey(key);
}

/**
 * Standard Webhooks (https://www.standardwebhooks.com), as sent by Svix and others: `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` (a space-separated list of `v1,<base64>`; other versions such as
 * the asymmetric `v1a` are ignored), each `v1` an HMAC-SHA256 of `${id}.${timestamp}.${raw body}` keyed with the
 * base64-decoded secret. The signature is checked before the timestamp, which must be within the tolerance
 * either way.
 *
 * Event key: the `webhook-id` (signed, and the same across redeliveries). Type: the body's `type` when it is a
 * string, else its `eventType`, else `"unknown"`.
 *
 * @example
 * const svix = standardWebhooksProvider({ name: 'svix', secrets: ['whsec_...'], toleranceSeconds: 300 });
 * const event = svix.verify({ rawBody, header: (name) => request.headers.get(name) }, new Date());
 */
export function standardWebhooksProvider(options: StandardWebhooksProviderOptions): Provider {
  const { name } = options;
  if (typeof name !== 'string' || !PROVIDER_NAME.test(name)) {
    throw new TypeError(
      `standard webhooks: provider name ${JSON.stringify(name)} must be lower-case letters, digits or "-"`,
    );
  }
  assertSecrets(name, options.secrets);
  assertTolerance(name, options.toleranceSeconds);
  const keys: readonly KeyObject[] = options.secrets.map((secret, index) => secretKey(name, secret, index));
  const toleranceSeconds = options.toleranceSeconds;
  const hint =
    'are you verifying the raw request body (not re-serialized JSON)? ' +
    `is the secret configured for "${name}" this endpoint's signing secret?`;

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const header = webhookHeader(request, 'signature');
      if (header === undefined) {
        throw new MissingSignatureError(`${name}: the webhook-signature header is absent`);
      }
      const id = webhookHeader(request, 'id');
      if (id === undefined) {
        throw new InvalidSignatureError(
          `${name}: the webhook-id header is absent, so the signature cannot be checked`,
        );
      }
      const timestampText = webhookHeader(request, 'timestamp');
      if (timestampText === undefined) {
        throw new InvalidSignatureError(
          `${name}: the webhook-timestamp header is absent, so the signature cannot be checked`,
        );
      }
      const timestamp = parseUnixSeconds(timestampText);
      if (timestamp === undefined) {
        throw new InvalidSignatureError(
          `${name}: the webhook-timestamp header is not a unix time in seconds`,
        );
      }

      const signatures: Buffer[] = [];
      let v1Count = 0;
      for (const entry of header.split(' ')) {
        if (!entry.startsWith('v1,')) continue;
        v1Count++;
        const signature = decodeBase64Sha256(entry.slice(3));
        if (signature !== undefined) signatures.push(signature);
      }
      if (v1Count === 0) {
        throw new InvalidSignatureError(
          `${name}: the webhook-signature header has no "v1,<base64>" signature`,
        );
      }

      const prefix = `${id}.${timestamp}.`;
      let matched = false;
      for (const key of keys) {
        if (signatures.length === 0) break;
        const expected = hmacSha256(key, prefix, request.rawBody);
        if (signatures.some((signature) => bytesEqual(expected, signature))) {
          matched = true;
          break;
        }
      }
      if (!matched) {
        throw new InvalidSignatureError(`${name}: no v1 signature matched any configured secret; ${hint}`);
      }

      checkTimestamp(name, timestamp, now, toleranceSeconds);

      const { text, object } = decodeJsonBody(name, request.rawBody);
      const type =
        typeof object.type === 'string'
          ? object.type
          : typeof object.eventType === 'string'
            ? object.eventType
            : 'unknown';
      return {
        provider: name,
        eventId: id,
        type,
        payloadText: text,
        headers: { 'webhook-id': id, 'webhook-timestamp': timestampText },
        body: object,
      };
    },
  };
}

export interface SignStandardWebhookOptions {
  /** The `webhook-id`: one per message, the same across its redeliveries. */
  id: string;
  /** The exact body that will be sent. */
  payload: string | Uint8Array;
  /** A `whsec_<base64>` secret. */
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/**
 * The `webhook-signature` header value (`v1,<base64>`) for this message, for tests and the dev CLI. Send it with
 * `webhook-id: <id>` and `webhook-timestamp: <timestamp>`.
 *
 * @example
 * const signature = signStandardWebhook({ id: 'msg_1', timestamp: 1614265330, payload: body, secret: 'whsec_...' });
 */
export function signStandardWebhook({
  id,
  payload,
  secret,
  timestamp = unixSeconds(),
}: SignStandardWebhookOptions): string {
  const key = secretKey('signStandardWebhook', secret, 0);
  const signature = hmacSha256(key, `${id}.${Math.floor(timestamp)}.`, toBytes(payload)).toString('base64');
  return `v1,${signature}`;
}
