import { InvalidSignatureError } from '../../errors.ts';
import { checkTimestamp, decodeJsonBody } from '../../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import {
  bodyString,
  checkBodySignature,
  hmacSource,
  keptHeaders,
  requiredHeader,
  signBody,
  withAction,
  type BodySignature,
  type CatalogueProviderOptions,
} from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const LINEAR_FACTS: ProviderFacts = {
  scheme:
    "Linear-Signature: <hex HMAC-SHA256 of the raw body>, keyed with the webhook signing secret; the body's " +
    'webhookTimestamp (unix ms) is signed with it',
  eventKey:
    'Linear-Delivery (a UUID that "uniquely identifies the payload delivery"; Linear does not document whether ' +
    'a retry, which must carry a fresh webhookTimestamp, keeps it); refused as invalid_payload when absent',
  eventType: "the body's type and action (Issue.create, Comment.update)",
  toleranceSeconds: 60,
  retries: 'up to 3 retries with backoff: after 1 minute, 1 hour and 6 hours',
  quirks:
    'the timestamp is inside the signed body (webhookTimestamp, ms), 60 s by default as @linear/sdk; the Linear-Timestamp header is ignored',
  requiredOptions: [],
  docs: 'https://linear.app/developers/webhooks',
};

const SIGNATURE: BodySignature = {
  header: 'linear-signature',
  prefix: '',
  digest: 'sha256',
  encoding: 'hex',
  sender: 'Linear',
};

/**
 * Linear: `Linear-Signature` is the hex HMAC-SHA256 of the raw body keyed with the webhook's signing secret. The
 * timestamp is inside the signed body (`webhookTimestamp`, unix milliseconds), and must be within the tolerance
 * (60 seconds by default, as in @linear/sdk's `LinearWebhookClient`); the `Linear-Timestamp` header is not signed
 * and is ignored.
 *
 * Event key: `Linear-Delivery`. Type: the body's `type` and `action`, e.g. `Issue.create`.
 *
 * @example
 * const linear = linearProvider({ secrets: [process.env.LINEAR_WEBHOOK_SECRET] });
 */
export function linearProvider(options: CatalogueProviderOptions): Provider {
  const { name, keys, toleranceSeconds } = hmacSource('linear', options, LINEAR_FACTS.toleranceSeconds ?? 60);

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      checkBodySignature(name, request, keys, SIGNATURE);
      const { text, object } = decodeJsonBody(name, request.rawBody);
      const timestampMs = object.webhookTimestamp;
      if (typeof timestampMs !== 'number' || !Number.isSafeInteger(timestampMs)) {
        throw new InvalidSignatureError(`${name}: the signed body has no numeric webhookTimestamp`);
      }
      checkTimestamp(name, Math.floor(timestampMs / 1000), now, toleranceSeconds);

      const delivery = requiredHeader(name, request, 'linear-delivery', 'it is the event key');
      return {
        provider: name,
        eventId: delivery,
        type: withAction(bodyString(name, object, 'type'), object.action),
        payloadText: text,
        headers: keptHeaders(request, ['linear-event']),
        body: object,
      };
    },
  };
}

/**
 * The `Linear-Signature` header value for this body, for tests and the dev CLI. The body must carry a current
 * `webhookTimestamp` (unix milliseconds); send it with a fresh `Linear-Delivery`.
 */
export function signLinear({ payload, secret }: { payload: string | Uint8Array; secret: string }): string {
  return signBody(SIGNATURE, secret, payload);
}

/** The catalogue's linear: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'linear',
  facts: LINEAR_FACTS,
  create: linearProvider,
  eventFacts: [
    { label: 'Organization', paths: ['/organizationId'] },
    { label: 'Team', paths: ['/data/teamId', '/data/team/key'] },
  ],
  subject: ['/organizationId', '/data/id'],
  caseless: { eventId: true },
  excerpt: ['/action', '/type', '/createdAt', '/organizationId', '/data/id', '/data/teamId'],
};
