import { sign, verify, type KeyObject } from 'node:crypto';
import { InvalidPayloadError, InvalidSignatureError, MissingSignatureError } from '../../errors.ts';
import { assertSecrets, checkTimestamp, decodeJsonBody } from '../../shared.ts';
import type { Provider, Reception, SignedRequest } from '../../types.ts';
import {
  certificateSignedProvider,
  rsaSignature,
  signedIsoTime,
  type CertificateSourceOptions,
} from '../certificate-signed.ts';
import { CertificateError, createCertificateStore, SNS_CERTIFICATE_HOSTS } from '../certificates.ts';
import type { ProviderFacts } from '../facts.ts';
import { bodyString, keptHeaders, sourceName, tolerance, type CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const AWS_SNS_FACTS: ProviderFacts = {
  scheme:
    "Signature: base64 RSA signature (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA) of the message's " +
    'fields as "Name\\nvalue\\n" in the documented order, by the certificate at SigningCertURL (fetched from ' +
    'https://sns.<region>.amazonaws.com only, cached); no shared secret: the secrets are the TopicArns accepted',
  eventKey: "the body's MessageId (kept by retries); refused as invalid_signature when absent (it is signed)",
  eventType:
    "the body's Type: Notification, SubscriptionConfirmation or UnsubscribeConfirmation (route topics with " +
    'one source per topic group)',
  // AWS documents no tolerance; a retry resends the message signed at publication, and the retries of an HTTP/S
  // delivery policy end within 3,600 s (a hard limit): that plus 5 minutes of clock skew.
  toleranceSeconds: 3_900,
  retries:
    'default HTTP/S delivery policy: 3 retries 20 seconds apart; a custom policy may retry up to 100 times, ' +
    'never beyond 3,600 seconds in all (then the message is dropped, or goes to a dead-letter queue)',
  quirks:
    'the body is JSON sent as text/plain; a SubscriptionConfirmation is recorded like any message and never ' +
    'confirmed by the receiver: an operator or an effect opens its SubscribeURL; a message from a TopicArn not ' +
    'configured is refused before any certificate is fetched, since anyone can subscribe an endpoint to a topic',
  requiredOptions: [],
  docs: 'https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html',
};

type MessageType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

/** The signed fields of each message type, in the order they are signed; `Subject` only when present. */
const SIGNED_FIELDS: Record<MessageType, readonly string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: [
    'Message',
    'MessageId',
    'SubscribeURL',
    'Timestamp',
    'Token',
    'TopicArn',
    'Type',
  ],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
const DIGESTS: Record<string, 'sha1' | 'sha256'> = { '1': 'sha1', '2': 'sha256' };
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;
const KEPT = ['x-amz-sns-subscription-arn'];

/** The string SNS signs: each signed field of the message's type, present ones only, as `Name\nvalue\n`. */
export function snsStringToSign(name: string, message: Record<string, unknown>): string {
  const type = message.Type as MessageType;
  let text = '';
  for (const field of SIGNED_FIELDS[type]) {
    const value = message[field];
    if (value === undefined || (field === 'Subject' && value === null)) {
      if (field === 'Subject') continue;
      throw new InvalidSignatureError(`${name}: the message has no ${field}, which SNS signs`);
    }
    if (typeof value !== 'string') throw new InvalidSignatureError(`${name}: ${field} is not a string`);
    text += `${field}\n${value}\n`;
  }
  return text;
}

/** A string field of the message, or `missing_signature` naming it. */
function signatureField(name: string, message: Record<string, unknown>, field: string): string {
  const value = message[field];
  if (typeof value !== 'string' || value === '') {
    throw new MissingSignatureError(`${name}: the message has no ${field}; is this request really from SNS?`);
  }
  return value;
}

/**
 * AWS SNS over HTTP(S): the JSON message carries `Signature`, an RSA signature (`SignatureVersion` 1: SHA-1, 2:
 * SHA-256) of its signed fields, by the certificate at `SigningCertURL`, which is fetched only from
 * `sns.<region>.amazonaws.com` (a `.pem` path, https) and cached. `secrets` are the TopicArns this source accepts:
 * AWS signs every topic's messages, anyone's included, so the topic is what makes a message this source's. Keyed
 * by `MessageId`, typed by `Type`.
 */
export function awsSnsProvider(options: CatalogueProviderOptions & CertificateSourceOptions): Provider {
  const name = sourceName('aws-sns', options.name);
  assertSecrets(name, options.secrets);
  for (const [index, arn] of options.secrets.entries()) {
    if (!TOPIC_ARN.test(arn)) {
      throw new TypeError(
        `${name}: secret #${index + 1} is not a topic ARN (arn:aws:sns:<region>:<account>:<topic>)`,
      );
    }
  }
  const topics = new Set(options.secrets);
  const toleranceSeconds = tolerance(name, options.toleranceSeconds, AWS_SNS_FACTS.toleranceSeconds ?? 3_900);
  const certificates = createCertificateStore({
    allowedHosts: SNS_CERTIFICATE_HOSTS,
    fetch: options.certificateFetch,
  });

  async function receiveAsync(request: SignedRequest, now: Date): Promise<Reception> {
    const { text, object } = decodeJsonBody(name, request.rawBody);
    const type = object.Type;
    if (typeof type !== 'string' || !Object.hasOwn(SIGNED_FIELDS, type)) {
      throw new InvalidPayloadError(
        `${name}: Type is not Notification, SubscriptionConfirmation or UnsubscribeConfirmation`,
      );
    }
    const signatureText = signatureField(name, object, 'Signature');
    const certificateUrl = signatureField(name, object, 'SigningCertURL');
    const digest = DIGESTS[signatureField(name, object, 'SignatureVersion')];
    if (digest === undefined) throw new InvalidSignatureError(`${name}: SignatureVersion is neither 1 nor 2`);
    // Checked before any certificate is fetched: a foreign topic, a stale message or a URL off AWS's hosts costs
    // no request.
    if (typeof object.TopicArn !== 'string' || !topics.has(object.TopicArn)) {
      throw new InvalidSignatureError(
        `${name}: TopicArn ${JSON.stringify(String(object.TopicArn).slice(0, 300))} is not one this source accepts; ` +
          "add it to the source's secrets if it is yours",
      );
    }
    const timestamp = typeof object.Timestamp === 'string' ? object.Timestamp : '';
    checkTimestamp(name, signedIsoTime(name, timestamp, 'Timestamp'), now, toleranceSeconds);
    if (!certificates.allowed(certificateUrl) || !new URL(certificateUrl).pathname.endsWith('.pem')) {
      throw new CertificateError(
        'certificate_url_refused',
        `${name}: SigningCertURL ${certificateUrl.slice(0, 200)} is not a .pem on https://sns.<region>.amazonaws.com`,
      );
    }
    const signed = snsStringToSign(name, object);
    const signature = rsaSignature(name, signatureText, 'Signature');
    const certificate = await certificates.get(certificateUrl, now);
    if (!verifyRsa(digest, signed, certificate.publicKey, signature)) {
      throw new InvalidSignatureError(
        `${name}: the Signature is not the certificate's over the message; was the body changed in transit?`,
      );
    }
    // Present (it is signed); an empty one is an authentic message without a key.
    const eventId = bodyString(name, object, 'MessageId');
    return {
      kind: 'events',
      events: [{ provider: name, eventId, type, payloadText: text, headers: keptHeaders(request, KEPT) }],
    };
  }

  return certificateSignedProvider(name, receiveAsync);
}

/** Whether `signature` is the RSA one of `text` under `key`; bytes OpenSSL cannot read are a mismatch. */
function verifyRsa(digest: 'sha1' | 'sha256', text: string, key: KeyObject, signature: Buffer): boolean {
  try {
    return verify(digest, Buffer.from(text, 'utf8'), key, signature);
  } catch {
    return false;
  }
}

export interface SignSnsOptions {
  /** The message's fields as SNS sends them (`Type`, `MessageId`, `TopicArn`, `Message`, `Timestamp`, ...). */
  message: Record<string, string>;
  /** The private key of the certificate served at `certificateUrl`. */
  privateKey: KeyObject;
  certificateUrl: string;
  signatureVersion?: '1' | '2';
}

/** The JSON body SNS would send for `message`, signed (tests, the bench and the dev CLI). */
export function signSns({
  message,
  privateKey,
  certificateUrl,
  signatureVersion = '2',
}: SignSnsOptions): string {
  const digest = DIGESTS[signatureVersion] ?? 'sha256';
  const signature = sign(digest, Buffer.from(snsStringToSign('aws-sns', message), 'utf8'), privateKey);
  return JSON.stringify({
    ...message,
    SignatureVersion: signatureVersion,
    Signature: signature.toString('base64'),
    SigningCertURL: certificateUrl,
  });
}

/** The catalogue's aws-sns: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'aws-sns',
  facts: AWS_SNS_FACTS,
  create: awsSnsProvider,
  certificateHosts: SNS_CERTIFICATE_HOSTS,
  eventFacts: [{ label: 'Topic', paths: ['/TopicArn'] }],
  excerpt: ['/Type', '/MessageId', '/TopicArn', '/Timestamp'],
};
