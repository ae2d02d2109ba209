import { createHmac, type KeyObject, createSecretKey } from 'node:crypto';
import { InvalidPayloadError, MissingSignatureError } from '../../errors.ts';
import { assertSecrets, decodeJsonBody } from '../../shared.ts';
import type { SignedRequest, VerifiedEvent } from '../../types.ts';
import { batchProvider, type BatchProvider } from '../batch.ts';
import type { ProviderFacts } from '../facts.ts';
import { partsMatch, bodyObject, bodyString, decodeDigest, noMatch, sourceName } from '../signing.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const ADYEN_FACTS: ProviderFacts = {
  scheme:
    'per notification item: additionalData.hmacSignature = <base64 HMAC-SHA256 of "pspReference:originalReference:' +
    'merchantAccountCode:merchantReference:amount.value:amount.currency:eventCode:success">, keyed with the ' +
    "webhook's HMAC key (hex); the body itself is not signed",
  eventKey:
    'per item: <merchantAccountCode>:<pspReference>:<eventCode>:<success>, what Adyen says identifies an event; ' +
    'refused as invalid_payload when pspReference or eventCode is absent',
  eventType: "each item's eventCode (AUTHORISATION, CAPTURE, REFUND, CHARGEBACK, ...)",
  toleranceSeconds: undefined,
  retries:
    'not accepted within 10 seconds: 3 immediate retries, then a retry queue at 2, 5, 10, 15, 30 minutes, ' +
    '1, 2, 4, 8 hours and on, for up to 30 days',
  quirks:
    'a body batches notificationItems[].NotificationRequestItem (each verified, all recorded together or ' +
    'none); every answer is [accepted] as text, duplicates too; only the signed fields are authenticated',
  requiredOptions: [],
  docs: 'https://docs.adyen.com/development-resources/webhooks/verify-hmac-signatures',
};

const ACCEPTED = { status: 200, contentType: 'text/plain; charset=utf-8', body: '[accepted]' } as const;
const HEX_KEY = /^(?:[0-9a-fA-F]{2})+$/;

/** The HMAC key object of a hex key as the Customer Area shows it. */
function adyenKey(name: string, hex: string, index: number): KeyObject {
  if (!HEX_KEY.test(hex)) throw new TypeError(`${name}: secret #${index + 1} is not an HMAC key in hex`);
  return createSecretKey(Buffer.from(hex, 'hex'));
}

/** What Adyen signs of one NotificationRequestItem: eight fields joined by `:`, absent ones empty. */
export function adyenSignedText(item: Record<string, unknown>): string {
  const amount =
    typeof item.amount === 'object' && item.amount !== null ? (item.amount as Record<string, unknown>) : {};
  return [
    item.pspReference,
    item.originalReference,
    item.merchantAccountCode,
    item.merchantReference,
    amount.value,
    amount.currency,
    item.eventCode,
    item.success,
  ]
    .map((field) => (typeof field === 'string' || typeof field === 'number' ? String(field) : ''))
    .join(':');
}

/**
 * Adyen standard (payment) webhooks: a body holds `notificationItems[]`, each a `NotificationRequestItem` whose
 * `additionalData.hmacSignature` is the base64 HMAC-SHA256 of its signed text (`adyenSignedText`) under the hex
 * HMAC key. Every item must match; each becomes one event, recorded together. Adyen requires `[accepted]` as the
 * answer.
 */
export function adyenProvider(options: CatalogueProviderOptions): BatchProvider {
  const name = sourceName('adyen', options.name);
  assertSecrets(name, options.secrets);
  const keys = options.secrets.map((secret, index) => adyenKey(name, secret, index));

  const verifyBatch = (request: SignedRequest): VerifiedEvent[] => {
    const { object } = decodeJsonBody(name, request.rawBody);
    const items = object.notificationItems;
    if (!Array.isArray(items) || items.length === 0) {
      throw new InvalidPayloadError(`${name}: the body has no notificationItems[]`);
    }
    return items.map((wrapper: unknown): VerifiedEvent => {
      const item = bodyObject(name, (wrapper ?? {}) as Record<string, unknown>, 'NotificationRequestItem');
      checkItem(name, keys, item);
      const key = [
        item.merchantAccountCode,
        bodyString(name, item, 'pspReference'),
        bodyString(name, item, 'eventCode'),
        item.success,
      ];
      return {
        provider: name,
        eventId: key.map((part) => (typeof part === 'string' ? part : '')).join(':'),
        type: bodyString(name, item, 'eventCode'),
        payloadText: JSON.stringify({ live: object.live, NotificationRequestItem: item }),
        headers: {},
      };
    });
  };

  return batchProvider(name, verifyBatch, { response: ACCEPTED });
}

/** Refuses an item whose hmacSignature is absent or matches no key. */
function checkItem(name: string, keys: readonly KeyObject[], item: Record<string, unknown>): void {
  const additional = item.additionalData;
  const text =
    typeof additional === 'object' && additional !== null
      ? (additional as Record<string, unknown>).hmacSignature
      : undefined;
  if (typeof text !== 'string' || text === '') {
    throw new MissingSignatureError(
      `${name}: a notification item has no additionalData.hmacSignature; is HMAC enabled on the webhook?`,
    );
  }
  const signature = decodeDigest(text, 'sha256', 'base64');
  if (!partsMatch('sha256', keys, [adyenSignedText(item)], signature ? [signature] : [])) {
    throw noMatch(name, "a notification item's hmacSignature");
  }
}

/** The `hmacSignature` Adyen would put in this item's additionalData (tests and the dev CLI). */
export function signAdyen({ item, secret }: { item: Record<string, unknown>; secret: string }): string {
  return createHmac('sha256', Buffer.from(secret, 'hex'))
    .update(adyenSignedText(item), 'utf8')
    .digest('base64');
}

// One notification item's fields in an alert excerpt, as recorded alone or inside the batch it came in.
const ITEM_EXCERPT = [
  '/eventCode',
  '/success',
  '/pspReference',
  '/originalReference',
  '/merchantAccountCode',
  '/eventDate',
  '/amount/currency',
  '/amount/value',
];

/** The catalogue's adyen: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'adyen',
  facts: ADYEN_FACTS,
  create: adyenProvider,
  eventFacts: [
    {
      label: 'Merchant account',
      paths: [
        '/NotificationRequestItem/merchantAccountCode',
        '/merchantAccountCode',
        '/notificationItems/0/NotificationRequestItem/merchantAccountCode',
      ],
    },
  ],
  excerpt: [
    '/live',
    ...ITEM_EXCERPT,
    ...ITEM_EXCERPT.map((pointer) => `/NotificationRequestItem${pointer}`),
    ...ITEM_EXCERPT.map((pointer) => `/notificationItems/*/NotificationRequestItem${pointer}`),
  ],
};
