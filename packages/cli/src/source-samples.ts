import { randomUUID, type KeyObject } from 'node:crypto';
import {
  isBuiltinSource,
  signApiKey,
  signBasicAuth,
  signEd25519,
  signHmac,
  signShopify,
  signStandardWebhook,
  signStripe,
  type SourceDefinition,
} from '@webhook-inbox/providers';
import { catalogueDelivery } from '@webhook-inbox/samples';
import { UsageError } from './errors.ts';
import { shopifySample, stripeSample, type ShopifySample } from './samples.ts';
import { signingFor, type SigningOptions } from './signing-key.ts';

/** One signed request for a configured source: what `send` posts. */
interface SourceDelivery {
  /** Appended to `/webhooks/<name>` (an API key in the query, for instance). */
  query: string;
  body: string;
  headers: Record<string, string>;
  /** The event key the receiver should record. */
  id: string;
}

/** A Stripe sample body as Stripe would sign and key it. */
export function signedStripeSample(body: string, secret: string): SourceDelivery {
  const { id } = JSON.parse(body) as { id: string };
  return { query: '', body, id, headers: { 'stripe-signature': signStripe({ payload: body, secret }) } };
}

/** A Shopify sample event with the headers the receiver verifies and keys it by. */
export function signedShopifySample(event: ShopifySample, secret: string): SourceDelivery {
  return {
    query: '',
    body: event.body,
    id: `${event.shop}:${event.topic}:${event.eventId}`,
    headers: {
      'x-shopify-hmac-sha256': signShopify({ payload: event.body, secret }),
      'x-shopify-topic': event.topic,
      'x-shopify-shop-domain': event.shop,
      'x-shopify-event-id': event.eventId,
    },
  };
}

type Template = Extract<SourceDefinition, { type: 'hmac' | 'basic-auth' | 'api-key' | 'ed25519' }>;

/** RFC 6901 tokens of a pointer (the file was validated: every pointer is well-formed). */
const tokensOf = (pointer: string) =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));

/** Sets `value` at `pointer` in `target`, creating the objects on the way. */
function setAt(target: Record<string, unknown>, pointer: string, value: unknown): void {
  const tokens = tokensOf(pointer);
  let node = target;
  tokens.forEach((token, index) => {
    if (index === tokens.length - 1) node[token] = value;
    else node = (node[token] ??= {}) as Record<string, unknown>;
  });
}

/**
 * A sample event for a template source: a body holding a fresh key and the type where the source reads them (a
 * header, a pointer into the body or into a batch's one item), authenticated as the source expects.
 */
function templateSample(
  source: Template,
  type: string,
  secret: string,
  privateKey?: KeyObject,
): SourceDelivery {
  const unique = randomUUID();
  const headers: Record<string, string> = {};
  const item: Record<string, unknown> = { id: unique, type };
  let id: string = unique;
  const { eventKey, eventType } = source;
  // A key of several parts: the type in each but the last, the fresh id there.
  const parts = (count: number) => Array.from({ length: count }, (_, i) => (i === count - 1 ? unique : type));
  if (eventKey?.header !== undefined) {
    const names = typeof eventKey.header === 'string' ? [eventKey.header] : eventKey.header;
    const values = parts(names.length);
    names.forEach((name, index) => (headers[name] = values[index] ?? unique));
    id = values.join(':');
  }
  if (eventKey?.pointer !== undefined) {
    const pointers = typeof eventKey.pointer === 'string' ? [eventKey.pointer] : eventKey.pointer;
    const values = parts(pointers.length);
    pointers.forEach((pointer, index) => setAt(item, pointer, values[index]));
    id = values.join(':');
  }
  if (eventType.header) headers[eventType.header] = type;
  if (eventType.pointer !== undefined) setAt(item, eventType.pointer, type);
  let body: string;
  if (source.body === 'form') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    const fields = Object.entries(item).map(([name, value]): [string, string] => [
      name,
      typeof value === 'string' ? value : JSON.stringify(value),
    ]);
    body = new URLSearchParams(fields).toString();
  } else {
    headers['content-type'] = 'application/json';
    const batch: Record<string, unknown> = {};
    if (source.batch) setAt(batch, source.batch.items, [item]);
    body = JSON.stringify(source.batch ? (source.batch.items === '' ? [item] : batch) : item);
  }
  if (eventKey?.bodyHash) id = '(its body hash)';
  let query = '';
  switch (source.type) {
    case 'hmac':
      Object.assign(
        headers,
        signHmac({ hmac: source.hmac, secret, payload: body, id: unique, url: source.publicUrl }),
      );
      break;
    case 'basic-auth':
      Object.assign(headers, signBasicAuth(secret));
      break;
    case 'api-key': {
      const signed = signApiKey(source.apiKey, secret);
      Object.assign(headers, signed.headers);
      query = signed.query;
      break;
    }
    case 'ed25519':
      // signingFor refused the source without --private-key, so the key is there.
      Object.assign(
        headers,
        signEd25519({ ed25519: source.ed25519, privateKey: privateKey!, payload: body }),
      );
      break;
  }
  return { query, body, headers, id };
}

/**
 * A signed sample event of `type` for `source`, with its first (current) secret. A catalogue source (`type:
 * github`) sends `payload` instead of its sample when one is given; one verified with a public key (Discord,
 * SendGrid, AWS SNS, PayPal) is signed with the private key of `signing` instead of a secret.
 */
export function sourceSample(
  source: SourceDefinition,
  type: string,
  payload?: string,
  signing: SigningOptions = {},
): SourceDelivery {
  const secret = source.secrets[0] ?? '';
  if (!isBuiltinSource(source)) {
    const { privateKey, certificateUrl } = signingFor(source.name, source.type, signing);
    const delivery = catalogueDelivery(source.type, {
      secret,
      type,
      url: source.url,
      payload,
      privateKey,
      certificateUrl,
    });
    if (delivery === undefined) {
      throw new UsageError(
        `source "${source.name}" (${source.type}) has no sample: pass --payload <file.json>`,
      );
    }
    return {
      query: '',
      body: delivery.body,
      headers: delivery.headers,
      id: delivery.key ?? '(from the payload)',
    };
  }
  if (payload !== undefined) {
    throw new UsageError(`--payload is for catalogue sources; "${source.name}" is of type ${source.type}`);
  }
  const { privateKey } = signingFor(source.name, source.type, signing);
  switch (source.type) {
    case 'stripe':
      return signedStripeSample(stripeSample(type, {}), secret);
    case 'shopify':
      return signedShopifySample(shopifySample(type, {}), secret);
    case 'standard-webhooks': {
      const id = `msg_${randomUUID()}`;
      const body = JSON.stringify({ type, data: {} });
      const timestamp = Math.floor(Date.now() / 1000);
      return {
        query: '',
        body,
        id,
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signStandardWebhook({ id, timestamp, payload: body, secret }),
        },
      };
    }
    default:
      return templateSample(source, type, secret, privateKey);
  }
}
