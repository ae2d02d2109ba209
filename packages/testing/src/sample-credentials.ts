import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

/** What a test or the bench configures a catalogue source with, and signs its deliveries with. Never for production. */
export interface SampleCredentials {
  /** A secret in the form the provider's secrets take (for SendGrid, a public key). */
  secret: string;
  /** The matching private key, for a provider that signs with one. */
  privateKey?: KeyObject;
  /** The PEM certificate of `privateKey`, for a provider that fetches it from a URL in the message (AWS SNS, PayPal). */
  certificate?: string;
}

type KeyPair = { publicKey: KeyObject; privateKey: KeyObject };
let ecdsa: KeyPair | undefined;
let ed25519: KeyPair | undefined;
let rsa: { privateKey: KeyObject; certificate: string } | undefined;

/** The sample source secrets of the certificate-based providers: what their secrets are (a topic, a webhook id). */
const CERTIFICATE_SECRETS: Readonly<Record<string, string>> = {
  'aws-sns': 'arn:aws:sns:us-east-1:123456789012:webhook-inbox-sample',
  paypal: '8PT597110X687430LKGECATA',
};

/** What the credentials depend on: a catalogue entry's type and scheme (`@webhook-inbox/providers`' `CatalogueEntry`). */
export interface CredentialsFor {
  type: string;
  facts: { scheme: string };
}

/** Sample credentials of a catalogue provider, the same for every call in a process. */
export function sampleCredentials(entry: CredentialsFor): SampleCredentials {
  if (entry.type === 'postmark') return { secret: 'hooks:postmark-password' };
  if (entry.facts.scheme.toLowerCase().includes('svix')) {
    return {
      secret: `whsec_${Buffer.from(`${entry.type}-signing-key-of-32-bytes!!`.slice(0, 32)).toString('base64')}`,
    };
  }
  if (entry.type === 'sendgrid') {
    ecdsa ??= generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    return {
      secret: ecdsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      privateKey: ecdsa.privateKey,
    };
  }
  if (entry.type === 'discord') {
    ed25519 ??= generateKeyPairSync('ed25519');
    // The developer portal shows the raw 32-byte key: the last 32 bytes of its SPKI form, in hex.
    const raw = ed25519.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32);
    return { secret: raw.toString('hex'), privateKey: ed25519.privateKey };
  }
  const certificateSecret = CERTIFICATE_SECRETS[entry.type];
  if (certificateSecret !== undefined) {
    rsa ??= selfSignedCertificate();
    return { secret: certificateSecret, privateKey: rsa.privateKey, certificate: rsa.certificate };
  }
  // Adyen's HMAC key is hex, as the Customer Area shows it.
  if (entry.type === 'adyen')
    return { secret: Buffer.from('adyen-hmac-key-of-32-bytes-long!').toString('hex') };
  return { secret: `${entry.type}-signing-secret` };
}

/**
 * An RSA key (2048 bits unless `bits` says otherwise) and a self-signed certificate of it for `commonName`, valid for two days, made by the `openssl`
 * command (Node cannot issue certificates): what tests and the bench serve at a sample delivery's certificate URL,
 * or a loopback TLS server presents. `extra`: more `openssl req` arguments (`-addext subjectAltName=...`).
 */
export function selfSignedCertificate(
  commonName = 'webhook-inbox sample',
  extra: readonly string[] = [],
  bits = 2048,
): { privateKey: KeyObject; privateKeyPem: string; certificate: string } {
  const pems = execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', `rsa:${bits}`, '-nodes', '-keyout', '-', '-subj', `/CN=${commonName}`].concat(
      ['-days', '2', '-out', '-'],
      extra,
    ),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  ).toString();
  const certificate = pems.slice(pems.indexOf('-----BEGIN CERTIFICATE-----'));
  const privateKeyPem = pems.slice(0, pems.indexOf('-----BEGIN CERTIFICATE-----'));
  return { privateKey: createPrivateKey(privateKeyPem), privateKeyPem, certificate };
}
