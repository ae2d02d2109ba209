import { randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { InvalidSignatureError } from '../../errors.ts';
import { assertSecrets, checkTimestamp, decodeJsonBody, headerValue, toBytes } from '../../shared.ts';
import type { Provider, Reception, SignedRequest } from '../../types.ts';
import {
  certificateSignedProvider,
  rsaSignature,
  signedIsoTime,
  type CertificateSourceOptions,
} from '../certificate-signed.ts';
import { createCertificateStore, PAYPAL_CERTIFICATE_HOSTS } from '../certificates.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueDefinition } from '../definition.ts';
import {
  bodyKeyedEvent,
  keptHeaders,
  signatureHeader,
  sourceName,
  tolerance,
  type CatalogueProviderOptions,
} from '../signing.ts';

export const PAYPAL_FACTS: ProviderFacts = {
  scheme:
    'PAYPAL-TRANSMISSION-SIG: base64 SHA256withRSA signature of "<PAYPAL-TRANSMISSION-ID>|' +
    '<PAYPAL-TRANSMISSION-TIME>|<webhook id>|<CRC32 of the raw body, decimal>", by the certificate at ' +
    'PAYPAL-CERT-URL (fetched from api.paypal.com or api.sandbox.paypal.com only, cached); the secrets are the ' +
    "webhook ids of the app's webhooks (Developer Dashboard > Apps > Webhooks)",
  eventKey: "the body's id (WH-...), the same in every retry; refused as invalid_payload when absent",
  eventType: "the body's event_type (PAYMENT.CAPTURE.COMPLETED, BILLING.SUBSCRIPTION.ACTIVATED, ...)",
  // PayPal documents no tolerance, nor whether a retry is signed afresh; 300 s keeps short the window in which a
  // captured transmission's body can be swapped for another of the same CRC32 (docs/providers.md, paypal).
  toleranceSeconds: 300,
  retries: 'up to 25 times over 3 days while the endpoint does not answer 2xx',
  quirks:
    'PAYPAL-AUTH-ALGO must be SHA256withRSA; verification is local (no postback to PayPal); a sandbox and a live ' +
    'webhook are two webhook ids, listed together during a move',
  requiredOptions: [],
  docs: 'https://developer.paypal.com/api/rest/webhooks/rest/',
};

const HEADERS = {
  id: 'paypal-transmission-id',
  time: 'paypal-transmission-time',
  signature: 'paypal-transmission-sig',
  certificate: 'paypal-cert-url',
  algorithm: 'paypal-auth-algo',
} as const;
const ALGORITHM = 'SHA256withRSA';
const WEBHOOK_ID = /^[A-Za-z0-9]{1,50}$/;

/** What PayPal signs: the transmission id and time, the webhook id and the body's CRC32, separated by `|`. */
export function paypalSignedText(
  transmissionId: string,
  transmissionTime: string,
  webhookId: string,
  rawBody: Uint8Array,
): string {
  return `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(rawBody)}`;
}

/**
 * PayPal webhooks, verified locally: `PAYPAL-TRANSMISSION-SIG` is the SHA256withRSA signature of
 * `transmissionId|transmissionTime|webhookId|crc32(body)` by the certificate at `PAYPAL-CERT-URL`, fetched only from
 * PayPal's API hosts and cached. `secrets` are webhook ids; any may match. Keyed by the body's `id`, typed by its
 * `event_type`.
 */
export function paypalProvider(options: CatalogueProviderOptions & CertificateSourceOptions): Provider {
  const name = sourceName('paypal', options.name);
  assertSecrets(name, options.secrets);
  for (const [index, id] of options.secrets.entries()) {
    if (!WEBHOOK_ID.test(id)) throw new TypeError(`${name}: secret #${index + 1} is not a webhook id`);
  }
  const webhookIds = options.secrets;
  const toleranceSeconds = tolerance(name, options.toleranceSeconds, PAYPAL_FACTS.toleranceSeconds ?? 300);
  const certificates = createCertificateStore({
    allowedHosts: PAYPAL_CERTIFICATE_HOSTS,
    fetch: options.certificateFetch,
  });

  const required = (request: SignedRequest, header: string): string => {
    const value = headerValue(request.header(header));
    if (value === undefined) throw new InvalidSignatureError(`${name}: the ${header} header is absent`);
    return value;
  };

  async function receiveAsync(request: SignedRequest, now: Date): Promise<Reception> {
    const signatureText = signatureHeader(name, request, HEADERS.signature, 'PayPal');
    const algorithm = required(request, HEADERS.algorithm);
    if (algorithm !== ALGORITHM) {
      throw new InvalidSignatureError(
        `${name}: ${HEADERS.algorithm} is ${algorithm.slice(0, 50)}, not ${ALGORITHM}`,
      );
    }
    const transmissionId = required(request, HEADERS.id);
    const transmissionTime = required(request, HEADERS.time);
    // Before the certificate is fetched: a stale transmission costs no request.
    checkTimestamp(name, signedIsoTime(name, transmissionTime, HEADERS.time), now, toleranceSeconds);
    const signature = rsaSignature(name, signatureText, HEADERS.signature);
    const certificate = await certificates.get(required(request, HEADERS.certificate), now);
    const matches = webhookIds.some((webhookId) => {
      const text = paypalSignedText(transmissionId, transmissionTime, webhookId, request.rawBody);
      try {
        return verify('sha256', Buffer.from(text, 'utf8'), certificate.publicKey, signature);
      } catch {
        return false;
      }
    });
    if (!matches) {
      throw new InvalidSignatureError(
        `${name}: the signature matched no configured webhook id; is the secret the id of this webhook ` +
          '(sandbox and live differ), and the body the raw request body?',
      );
    }
    const event = bodyKeyedEvent(name, decodeJsonBody(name, request.rawBody), 'id', 'event_type');
    return { kind: 'events', events: [{ ...event, headers: keptHeaders(request, [HEADERS.id]) }] };
  }

  return certificateSignedProvider(name, receiveAsync);
}

export interface SignPaypalOptions {
  payload: string | Uint8Array;
  /** The private key of the certificate served at `certificateUrl`. */
  privateKey: KeyObject;
  certificateUrl: string;
  webhookId: string;
  /** When it is sent; default now. */
  time?: Date;
  transmissionId?: string;
}

/** The headers PayPal would send with `payload` (tests, the bench and the dev CLI). */
export function signPaypal(options: SignPaypalOptions): Record<string, string> {
  const transmissionId = options.transmissionId ?? randomUUID();
  const transmissionTime = (options.time ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const text = paypalSignedText(
    transmissionId,
    transmissionTime,
    options.webhookId,
    toBytes(options.payload),
  );
  return {
    [HEADERS.id]: transmissionId,
    [HEADERS.time]: transmissionTime,
    [HEADERS.signature]: sign('sha256', Buffer.from(text, 'utf8'), options.privateKey).toString('base64'),
    [HEADERS.certificate]: options.certificateUrl,
    [HEADERS.algorithm]: ALGORITHM,
  };
}

/** The catalogue's paypal: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'paypal',
  facts: PAYPAL_FACTS,
  create: paypalProvider,
  certificateHosts: PAYPAL_CERTIFICATE_HOSTS,
  eventFacts: [
    { label: 'Merchant', paths: ['/resource/payee/merchant_id'] },
    { label: 'Resource', paths: ['/resource_type'] },
  ],
  excerpt: [
    '/id',
    '/event_type',
    '/resource_type',
    '/create_time',
    '/resource/id',
    '/resource/status',
    '/resource/payee/merchant_id',
  ],
};
