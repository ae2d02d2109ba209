import { createHash } from 'node:crypto';
import { headerValue, hmacKey } from '../../shared.ts';
import { decodeForm, formPairs } from '../../template-body.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { hmacOf } from '../../signature-kernel.ts';
import {
  partsMatch,
  decodeDigest,
  keptHeaders,
  noMatch,
  publicUrl,
  secretKeys,
  signatureHeader,
  sourceName,
  type CatalogueProviderOptions,
} from '../signing.ts';
import { withUrl, type CatalogueDefinition } from '../definition.ts';

export const TWILIO_FACTS: ProviderFacts = {
  scheme:
    'X-Twilio-Signature: <base64 HMAC-SHA1 of the full public URL (query included) + each POST field name and ' +
    "value, sorted by name>, keyed with the account Auth Token; a JSON body is covered by the URL's bodySHA256",
  eventKey:
    'I-Twilio-Idempotency-Token (the same on every retry of one callback); without it, a SHA-256 of the raw ' +
    'body, which a retry repeats byte for byte',
  eventType:
    'message.<MessageStatus or SmsStatus> (message.received, message.delivered), call.<CallStatus> ' +
    '(call.ringing, call.completed), else request',
  toleranceSeconds: undefined,
  retries:
    'none by default; with connection overrides in the URL fragment (#rc=1..5, #rp=...) Twilio retries on ' +
    'connection failures and timeouts within seconds, with the same idempotency token; it never retries an answer',
  quirks:
    'the source needs url, the public URL exactly as configured in the Console (proxies change what the ' +
    'receiver sees; the query string comes from the request); forms are stored as {"form","raw"}; the answer ' +
    'is an empty TwiML <Response/> (no reply message; for voice, hang up)',
  requiredOptions: ['url'],
  docs: 'https://www.twilio.com/docs/usage/webhooks/webhooks-security',
};

/** The answer to every recorded request: empty TwiML, which sends no reply. */
const EMPTY_TWIML = {
  status: 200,
  contentType: 'text/xml; charset=utf-8',
  body: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>',
} as const;
const KEPT = ['i-twilio-idempotency-token'];

export interface TwilioProviderOptions extends CatalogueProviderOptions {
  /** The public URL Twilio posts to, as configured (`https://hooks.example.com/webhooks/twilio`); no query. */
  url: string;
}

/**
 * Twilio (Messaging and Voice webhooks and status callbacks): `X-Twilio-Signature` is the base64 HMAC-SHA1, keyed
 * with the Auth Token, of the URL Twilio requested (the configured public URL, then the request's query string)
 * followed by every POST field's name and value, sorted by name. Twilio may sign an https URL with or without
 * `:443`: both are tried, as its own libraries do. A JSON body carries `bodySHA256` in the query instead.
 */
export function twilioProvider(options: TwilioProviderOptions): Provider {
  const name = sourceName('twilio', options.name);
  const keys = secretKeys(name, options.secrets);
  const base = publicUrl(name, options.url).replace(/[?#].*$/, '');

  const verify = (request: SignedRequest): VerifiedEvent => {
    const signature = decodeDigest(
      signatureHeader(name, request, 'x-twilio-signature', 'Twilio'),
      'sha1',
      'base64',
    );
    const url = base + queryOf(request.url);
    const jsonBody = new URL(url).searchParams.get('bodySHA256');
    const parts = (candidate: string) =>
      jsonBody === null ? [candidate, ...sortedFields(request.rawBody)] : [candidate];
    const matched = urlVariants(url).some((candidate) =>
      partsMatch('sha1', keys, parts(candidate), signature ? [signature] : []),
    );
    if (!matched) throw noMatch(name, 'X-Twilio-Signature (over the public URL and the form fields)');
    if (jsonBody !== null && jsonBody !== createHash('sha256').update(request.rawBody).digest('hex')) {
      throw noMatch(name, 'the body against the signed bodySHA256');
    }
    const { value, payloadText } = decodeForm(name, request.rawBody);
    const token = headerValue(request.header('i-twilio-idempotency-token'));
    return {
      provider: name,
      eventId: token ?? `sha256:${createHash('sha256').update(request.rawBody).digest('hex')}`,
      type: typeOf(value as Record<string, unknown>),
      payloadText,
      headers: keptHeaders(request, KEPT),
    };
  };

  return {
    name,
    verify,
    receive: (request) => ({ kind: 'events', events: [verify(request)] }),
    response: EMPTY_TWIML,
  };
}

/** `?a=b` of the request's path, or `''`. */
function queryOf(path: string | undefined): string {
  const at = path?.indexOf('?') ?? -1;
  return path !== undefined && at !== -1 ? path.slice(at) : '';
}

/** The URL as given, and with its default port added or removed (Twilio signs either form). */
function urlVariants(url: string): string[] {
  const parsed = new URL(url);
  const port = parsed.protocol === 'https:' ? '443' : '80';
  const withPort = `${parsed.protocol}//${parsed.username ? `${parsed.username}:${parsed.password}@` : ''}${parsed.hostname}:${port}${parsed.pathname}${parsed.search}`;
  return parsed.port === '' ? [url, withPort] : [url, url.replace(`:${port}`, '')];
}

/** Each POST field as `name + value`, sorted by name (Twilio's order); a form-less body has none. */
function sortedFields(rawBody: Uint8Array): string[] {
  const pairs = formPairs(Buffer.from(rawBody).toString('utf8'));
  return pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => key + value);
}

function typeOf(fields: Record<string, unknown>): string {
  const status = fields.MessageStatus ?? fields.SmsStatus;
  if (typeof status === 'string' && status !== '') return `message.${status}`;
  if (typeof fields.CallStatus === 'string' && fields.CallStatus !== '') return `call.${fields.CallStatus}`;
  return 'request';
}

export interface SignTwilioOptions {
  /** The full URL Twilio requests, query string included. */
  url: string;
  /** The form body that will be sent (`application/x-www-form-urlencoded`). */
  payload: string;
  secret: string;
}

/** The `X-Twilio-Signature` Twilio would send for this URL and form (tests and the dev CLI). */
export function signTwilio({ url, payload, secret }: SignTwilioOptions): string {
  if (!URL.canParse(url)) throw new TypeError('twilio: sign needs the absolute URL Twilio requests');
  return hmacOf('sha1', hmacKey(secret), [url, ...sortedFields(Buffer.from(payload))]).toString('base64');
}

/** The catalogue's twilio: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'twilio',
  facts: TWILIO_FACTS,
  create: (options) => twilioProvider(withUrl(options)),
  // A form body is kept as `{ form, raw }` (template-body.ts): a field is read there, or at the top level.
  eventFacts: [
    { label: 'Account', paths: ['/form/AccountSid', '/AccountSid'] },
    { label: 'To', paths: ['/form/To', '/To'], personal: true },
    { label: 'From', paths: ['/form/From', '/From'], personal: true },
  ],
  excerpt: [
    '/form/AccountSid',
    '/form/MessageSid',
    '/form/SmsSid',
    '/form/CallSid',
    '/form/MessageStatus',
    '/form/SmsStatus',
    '/form/CallStatus',
    '/form/ErrorCode',
  ],
};
