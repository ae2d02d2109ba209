import { zoomValidation } from '../../handshakes.ts';
import { decodeJsonBody, unixSeconds } from '../../shared.ts';
import type { Provider, Reception, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { handshakingProvider } from '../handshaking.ts';
import {
  bodyObject,
  bodyString,
  hmacSource,
  keptHeaders,
  type CatalogueProviderOptions,
} from '../signing.ts';
import { checkV0Signature, signV0 } from '../v0-hmac.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const ZOOM_FACTS: ProviderFacts = {
  scheme:
    'x-zm-signature: v0=<hex HMAC-SHA256 of "v0:<x-zm-request-timestamp>:<raw body>">, keyed with the ' +
    "app's Secret Token (Features > Event Subscriptions)",
  eventKey:
    'Zoom sends no event id: <event>:<event_ts>:<payload.object uuid, else id, else payload.account_id>, all ' +
    'kept by retries; refused as invalid_payload when event or event_ts is absent',
  eventType: "the body's event (meeting.started, recording.completed, ...)",
  toleranceSeconds: 300,
  retries:
    'when not answered 200/204 within 3 seconds: 3 retries, 5 minutes, then 20 and 60 minutes after the ' +
    'previous one (about 85 minutes in all)',
  quirks:
    'endpoint.url_validation (signed, also every 72 hours) is answered {"plainToken","encryptedToken"} with the ' +
    'hex HMAC-SHA256 of plainToken under the first secret, never recorded; Zoom documents no tolerance',
  requiredOptions: [],
  docs: 'https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events',
};

const HEADERS = { signature: 'x-zm-signature', timestamp: 'x-zm-request-timestamp', sender: 'Zoom' };
const KEPT = ['x-zm-trackingid'];

/**
 * Zoom (Marketplace apps' event subscriptions): `x-zm-signature: v0=<hex>` is the HMAC-SHA256 of
 * `v0:<x-zm-request-timestamp>:<raw body>` keyed with the Secret Token. `endpoint.url_validation` is answered
 * with the token's HMAC under the first secret (the current one during a rotation). Zoom's payloads carry no event
 * id: the key joins the event, its `event_ts` and the object's uuid or id, which a retry repeats.
 */
export function zoomProvider(options: CatalogueProviderOptions): Provider {
  const { name, keys, toleranceSeconds } = hmacSource('zoom', options, ZOOM_FACTS.toleranceSeconds ?? 300);
  const current = options.secrets[0] ?? '';

  const receive = (request: SignedRequest, now: Date): Reception => {
    checkV0Signature(name, request, now, keys, toleranceSeconds, HEADERS);
    const { text, object } = decodeJsonBody(name, request.rawBody);
    const event = bodyString(name, object, 'event');
    if (event === 'endpoint.url_validation') {
      return {
        kind: 'handshake',
        handshake: 'zoom',
        answer: zoomValidation(name, bodyObject(name, object, 'payload').plainToken, current),
      };
    }
    const verified: VerifiedEvent = {
      provider: name,
      eventId: `${event}:${bodyString(name, object, 'event_ts')}:${objectKey(object)}`,
      type: event,
      payloadText: text,
      headers: keptHeaders(request, KEPT),
    };
    return { kind: 'events', events: [verified] };
  };

  return handshakingProvider(name, receive);
}

/** What identifies the event's object: its uuid (meetings), its id, else the account. */
function objectKey(object: Record<string, unknown>): string {
  const payload = object.payload;
  if (typeof payload !== 'object' || payload === null) return '';
  const { object: target, account_id: account } = payload as Record<string, unknown>;
  const fields = typeof target === 'object' && target !== null ? (target as Record<string, unknown>) : {};
  for (const value of [fields.uuid, fields.id, account]) {
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
  }
  return '';
}

/** The `x-zm-signature` and `x-zm-request-timestamp` headers Zoom would send (tests and the dev CLI). */
export function signZoom({
  payload,
  secret,
  timestamp = unixSeconds(),
}: {
  payload: string | Uint8Array;
  secret: string;
  timestamp?: number;
}): Record<string, string> {
  return signV0(HEADERS, payload, secret, timestamp);
}

/** The catalogue's zoom: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'zoom',
  facts: ZOOM_FACTS,
  create: zoomProvider,
  eventFacts: [{ label: 'Account', paths: ['/payload/account_id'] }],
  excerpt: ['/event', '/event_ts', '/payload/account_id', '/payload/object/id', '/payload/object/uuid'],
};
