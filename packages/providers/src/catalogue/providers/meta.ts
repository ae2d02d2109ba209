import { createHash } from 'node:crypto';
import { InvalidPayloadError } from '../../errors.ts';
import { metaSubscriptionChallenge, verifyTokenHash } from '../../handshakes.ts';
import { decodeJsonBody } from '../../shared.ts';
import type { Reception, SignedRequest, VerifiedEvent } from '../../types.ts';
import { batchProvider, type BatchProvider } from '../batch.ts';
import { checkBodySignature, signBody, bodyString, secretKeys, sourceName } from '../signing.ts';
import type { BodySignature, CatalogueProviderOptions } from '../signing.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const META_FACTS: ProviderFacts = {
  scheme:
    'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>, keyed with the App Secret (App settings > ' +
    'Basic); the GET subscription handshake is proven by the verify token typed into the dashboard',
  eventKey:
    'Meta sends no delivery id: per item of entry[] (a change or a messaging event), <entry.id>:<SHA-256 of the ' +
    "item's JSON>, the same when Meta resends it; refused as invalid_payload when entry[] is absent or empty",
  eventType:
    '<object>.<field> for changes (whatsapp_business_account.messages, page.feed, instagram.comments); ' +
    '<object>.<kind> for Messenger/Instagram messaging items (page.message, page.postback, page.read)',
  toleranceSeconds: undefined,
  retries:
    'Graph webhooks: a failed notification is retried immediately a few times, then less often over the ' +
    'next 36 hours; WhatsApp Cloud API notifications are retried for up to 7 days',
  quirks:
    'GET ?hub.mode=subscribe&hub.verify_token=...&hub.challenge=... is answered with the challenge when the ' +
    'token matches verifyToken (compared in constant time); each POST batches entries (up to 1000 changes), ' +
    'recorded one event per item, together or not at all',
  requiredOptions: ['verifyToken'],
  docs: 'https://developers.facebook.com/docs/graph-api/webhooks/getting-started',
};

const SIGNATURE: BodySignature = {
  header: 'x-hub-signature-256',
  prefix: 'sha256=',
  digest: 'sha256',
  encoding: 'hex',
  sender: 'Meta',
};
const TEXT = 'text/plain; charset=utf-8';
/** What a messaging item holds besides its kind. */
const MESSAGING_ENVELOPE = new Set(['sender', 'recipient', 'timestamp']);

export interface MetaProviderOptions extends CatalogueProviderOptions {
  /** The verify token typed into the app dashboard's webhook settings. */
  verifyToken: string;
}

/**
 * Meta (WhatsApp Cloud API, Messenger, Instagram and other Graph webhooks): `X-Hub-Signature-256: sha256=<hex>`
 * is the HMAC-SHA256 of the raw body keyed with the App Secret. A body batches `entry[]`, each holding `changes[]`
 * or `messaging[]`: one event per item, recorded together. The subscription is proven by a GET echoing
 * `hub.challenge` when `hub.verify_token` is the configured verify token.
 */
export function metaProvider(options: MetaProviderOptions): BatchProvider {
  const name = sourceName('meta', options.name);
  const keys = secretKeys(name, options.secrets);
  if (typeof options.verifyToken !== 'string' || options.verifyToken === '') {
    throw new TypeError(`${name}: verifyToken (the token typed into the app dashboard) is required`);
  }
  const expectedToken = verifyTokenHash(options.verifyToken);

  const verifyBatch = (request: SignedRequest): VerifiedEvent[] => {
    checkBodySignature(name, request, keys, SIGNATURE);
    const { object } = decodeJsonBody(name, request.rawBody);
    const kind = bodyString(name, object, 'object');
    const entries = object.entry;
    if (!Array.isArray(entries) || entries.length === 0) {
      throw new InvalidPayloadError(`${name}: the body has no entry[]`);
    }
    return entries.flatMap((entry: unknown) => entryEvents(name, kind, entry));
  };

  return batchProvider(name, verifyBatch, {
    handshake: (request) =>
      request.method === 'GET' ? subscription(name, request, expectedToken) : undefined,
  });
}

/** The GET handshake: the challenge, when the verify token is the configured one. */
function subscription(name: string, request: SignedRequest, expected: Buffer): Reception {
  return {
    kind: 'handshake',
    handshake: 'meta',
    answer: { status: 200, contentType: TEXT, body: metaSubscriptionChallenge(name, request, expected) },
  };
}

/** One event per change or messaging item of an entry, keyed by the entry's id and the item's hash. */
function entryEvents(name: string, object: string, entry: unknown): VerifiedEvent[] {
  if (typeof entry !== 'object' || entry === null)
    throw new InvalidPayloadError(`${name}: an entry is not an object`);
  const { id, changes, messaging } = entry as Record<string, unknown>;
  const entryId = typeof id === 'string' || typeof id === 'number' ? String(id) : '';
  const items = [
    ...(Array.isArray(changes)
      ? changes.map((item: unknown) => [item, changeType(object, item)] as const)
      : []),
    ...(Array.isArray(messaging)
      ? messaging.map((item: unknown) => [item, messagingType(object, item)] as const)
      : []),
  ];
  return items.map(([item, type]) => {
    const text = JSON.stringify(item);
    return {
      provider: name,
      eventId: `${entryId}:${createHash('sha256').update(text).digest('hex')}`,
      type,
      payloadText: JSON.stringify({ object, entry: { id: entryId, item } }),
      headers: {},
    };
  });
}

function changeType(object: string, item: unknown): string {
  const field =
    typeof item === 'object' && item !== null ? (item as Record<string, unknown>).field : undefined;
  return typeof field === 'string' && field !== '' ? `${object}.${field}` : `${object}.change`;
}

function messagingType(object: string, item: unknown): string {
  const fields = typeof item === 'object' && item !== null ? Object.keys(item) : [];
  return `${object}.${fields.find((field) => !MESSAGING_ENVELOPE.has(field)) ?? 'messaging'}`;
}

/** The `X-Hub-Signature-256` value Meta would send for this body (tests and the dev CLI). */
export function signMeta({ payload, secret }: { payload: string | Uint8Array; secret: string }): string {
  return signBody(SIGNATURE, secret, payload);
}

/** The catalogue's meta: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'meta',
  facts: META_FACTS,
  create: (options) => metaProvider({ ...options, verifyToken: options.verifyToken ?? '' }),
  eventFacts: [
    { label: 'Object', paths: ['/object'] },
    { label: 'Account', paths: ['/entry/0/id'] },
    { label: 'Business number id', paths: ['/entry/0/changes/0/value/metadata/phone_number_id'] },
  ],
  excerpt: ['/object', '/entry/*/id', '/entry/*/time', '/entry/*/changes/*/field'],
};
