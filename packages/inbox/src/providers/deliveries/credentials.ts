import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { CatalogueEntry } from '../catalogue/index.ts';

/** What a test or the bench configures a catalogue source with, and signs its deliveries with. Never for production. */
export interface SampleCredentials {
  /** A secret in the form the provider's secrets take (for SendGrid, a public key). */
  secret: string;
  /** The matching private key, for a provider that signs with one. */
  privateKey?: KeyObject;
}

type KeyPair = { publicKey: KeyObject; privateKey: KeyObject };
let ecdsa: KeyPair | undefined;
let ed25519: KeyPair | undefined;

/** Sample credentials of a catalogue provider, the same for every call in a process. */
export function sampleCredentials(entry: CatalogueEntry): SampleCredentials {
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
  // Adyen's HMAC key is hex, as the Customer Area shows it.
  if (entry.type === 'adyen')
    return { secret: Buffer.from('adyen-hmac-key-of-32-bytes-long!').toString('hex') };
  return { secret: `${entry.type}-signing-secret` };
}
