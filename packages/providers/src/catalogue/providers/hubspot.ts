import { checkTimestamp, hmacKey, toBytes } from '../../shared.ts';
import type { SignedRequest, VerifiedEvent } from '../../types.ts';
import { batchProvider, jsonArrayItems, type BatchProvider } from '../batch.ts';
import type { ProviderFacts } from '../facts.ts';
import { hmacOf } from '../../signature-kernel.ts';
import {
  bodyString,
  checkHmac,
  hmacSource,
  publicUrl,
  signatureHeader,
  signedTimestampHeader,
  type CatalogueProviderOptions,
} from '../signing.ts';
import { withUrl, type CatalogueDefinition } from '../definition.ts';

export const HUBSPOT_FACTS: ProviderFacts = {
  scheme:
    'X-HubSpot-Signature-v3: <base64 HMAC-SHA256 of "POST" + URL + raw body + X-HubSpot-Request-Timestamp>, ' +
    "keyed with the app's client secret; the timestamp is unix milliseconds",
  eventKey:
    'per item of the batch: portalId:subscriptionId:eventId:occurredAt (HubSpot says eventId alone is not ' +
    'guaranteed unique); refused as invalid_payload when one is absent',
  eventType: "each item's subscriptionType (contact.creation, deal.propertyChange)",
  toleranceSeconds: 300,
  retries: "up to 10 retries spread over 24 hours; each item's attemptNumber counts them",
  quirks:
    'a batch of up to 100 events per request, each recorded as its own event; the signed URL has some ' +
    'escapes decoded; v1/v2 signatures refused',
  requiredOptions: ['url'],
  docs: 'https://developers.hubspot.com/docs/apps/legacy-apps/authentication/validating-requests',
};

export interface HubspotProviderOptions extends CatalogueProviderOptions {
  /** The target URL exactly as set in the app's webhook settings: HubSpot signs it. */
  url: string;
}

/** HubSpot signs the URI with these escapes decoded (its documentation lists exactly these). */
const DECODED: Readonly<Record<string, string>> = {
  '%3A': ':',
  '%2F': '/',
  '%3F': '?',
  '%40': '@',
  '%21': '!',
  '%24': '$',
  '%27': "'",
  '%28': '(',
  '%29': ')',
  '%2A': '*',
  '%2C': ',',
  '%3B': ';',
};

/** The URI as HubSpot signs it. */
export function hubspotSignedUri(url: string): string {
  return url.replace(
    /%(?:3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi,
    (escape) => DECODED[escape.toUpperCase()] ?? escape,
  );
}

/**
 * HubSpot webhooks (v3 signatures): `X-HubSpot-Signature-v3` is the base64 HMAC-SHA256 of `POST`, the target URL
 * (some escapes decoded), the raw body and `X-HubSpot-Request-Timestamp` (unix milliseconds), keyed with the
 * app's client secret; the timestamp must be within the tolerance (5 minutes, as HubSpot's client library).
 * The v1 and v2 signatures (plain SHA-256 with the secret inside) are not accepted.
 *
 * A delivery is a JSON array of up to 100 events: `receive` gives one event per item (`batchProvider`), keyed
 * `portalId:subscriptionId:eventId:occurredAt` and typed by `subscriptionType`.
 *
 * @example
 * const hubspot = hubspotProvider({ secrets: [clientSecret], url: 'https://hooks.example.com/webhooks/hubspot' });
 */
export function hubspotProvider(options: HubspotProviderOptions): BatchProvider {
  const { name, keys, toleranceSeconds } = hmacSource(
    'hubspot',
    options,
    HUBSPOT_FACTS.toleranceSeconds ?? 300,
  );
  const uri = hubspotSignedUri(publicUrl(name, options.url));

  function verifyBatch(request: SignedRequest, now: Date): VerifiedEvent[] {
    const header = signatureHeader(name, request, 'x-hubspot-signature-v3', 'HubSpot');
    const { text: timestampText, value: timestampMs } = signedTimestampHeader(
      name,
      request,
      'x-hubspot-request-timestamp',
    );
    const parts = [`POST${uri}`, request.rawBody, timestampText];
    checkHmac(name, keys, parts, header, `X-HubSpot-Signature-v3 (over POST ${uri})`);
    checkTimestamp(name, Math.floor(timestampMs / 1000), now, toleranceSeconds);

    return jsonArrayItems(name, request.rawBody).map(({ object, text: itemText }) => ({
      provider: name,
      eventId: ['portalId', 'subscriptionId', 'eventId', 'occurredAt']
        .map((f) => bodyString(name, object, f))
        .join(':'),
      type: bodyString(name, object, 'subscriptionType'),
      payloadText: itemText,
      headers: {},
      body: object,
    }));
  }

  return batchProvider(name, verifyBatch);
}

export interface SignHubspotOptions {
  payload: string | Uint8Array;
  /** The app's client secret. */
  secret: string;
  /** The target URL as configured. */
  url: string;
  /** Unix milliseconds. */
  timestampMs: number;
}

/** The `X-HubSpot-Signature-v3` value HubSpot would send; send it with `X-HubSpot-Request-Timestamp`. */
export function signHubspot({ payload, secret, url, timestampMs }: SignHubspotOptions): string {
  const parts = [`POST${hubspotSignedUri(url)}`, toBytes(payload), String(Math.floor(timestampMs))];
  return hmacOf('sha256', hmacKey(secret), parts).toString('base64');
}

/** The catalogue's hubspot: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'hubspot',
  facts: HUBSPOT_FACTS,
  create: (options) => hubspotProvider(withUrl(options)),
  eventFacts: [{ label: 'Portal', paths: ['/portalId', '/0/portalId'] }],
  subject: ['/objectId', '/portalId'],
  excerpt: ['/eventId', '/subscriptionType', '/portalId', '/appId', '/objectId', '/occurredAt'],
};
