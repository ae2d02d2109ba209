import { createPrivateKey, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { InvalidSignatureError, MissingSignatureError } from './errors.ts';
import {
  assertSecrets,
  assertTolerance,
  checkTimestamp,
  headerValue,
  parseUnixSeconds,
  toBytes,
} from './shared.ts';
import type { Coverage } from './template-rules.ts';
import { ed25519PublicKey } from './public-keys.ts';
import { headerName, type TemplateSpec } from './template-schema.ts';
import { templateProvider } from './template-spec.ts';
import type { Provider, SignedRequest } from './types.ts';

export const ed25519Spec = z
  .object({
    signatureHeader: headerName.default('X-Signature-Ed25519'),
    timestampHeader: headerName.default('X-Signature-Timestamp'),
    toleranceSeconds: z.int().positive().optional(),
  })
  .strict();
export type Ed25519Spec = z.output<typeof ed25519Spec>;

// A raw 32-byte Ed25519 private key (seed) becomes a KeyObject through its PKCS#8 DER form: this prefix, then it.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** What an Ed25519 source's signature covers: the timestamp header and the body. */
export function ed25519Coverage(spec: Ed25519Spec): Coverage {
  return { kind: 'signature', headers: [spec.timestampHeader.toLowerCase()], bodyOnly: false };
}

export interface Ed25519ProviderOptions {
  name: string;
  /** The sender's public keys, hex (Discord's "public key"); more than one during a rotation. */
  secrets: readonly string[];
  ed25519: Ed25519Spec;
  template: TemplateSpec;
  toleranceSeconds: number;
}

/**
 * A sender that signs `timestamp + raw body` with Ed25519 (Discord interactions): the signature header is the
 * hex signature, checked against each configured public key, then the timestamp must be within the tolerance.
 *
 * @example
 * const discord = ed25519Provider({ name: 'discord', secrets: [publicKeyHex], ed25519: {...}, template, toleranceSeconds: 300 });
 */
export function ed25519Provider(options: Ed25519ProviderOptions): Provider {
  const { name, ed25519 } = options;
  assertSecrets(name, options.secrets);
  const tolerance = ed25519.toleranceSeconds ?? options.toleranceSeconds;
  assertTolerance(name, tolerance);
  const keys = options.secrets.map((secret, index) =>
    ed25519PublicKey(`${name}: secret #${index + 1}`, secret),
  );
  const authenticate = (request: SignedRequest, now: Date) => {
    const signatureText = headerValue(request.header(ed25519.signatureHeader));
    if (signatureText === undefined) {
      throw new MissingSignatureError(`${name}: the ${ed25519.signatureHeader} header is absent`);
    }
    const timestampText = headerValue(request.header(ed25519.timestampHeader));
    const timestamp = timestampText === undefined ? undefined : parseUnixSeconds(timestampText);
    if (timestampText === undefined || timestamp === undefined) {
      throw new InvalidSignatureError(
        `${name}: the ${ed25519.timestampHeader} header is absent or not unix seconds`,
      );
    }
    const signature = /^[0-9a-fA-F]{128}$/.test(signatureText)
      ? Buffer.from(signatureText, 'hex')
      : undefined;
    const message = Buffer.concat([Buffer.from(timestampText, 'utf8'), request.rawBody]);
    if (signature === undefined || !keys.some((key) => verify(null, message, key, signature))) {
      throw new InvalidSignatureError(`${name}: the Ed25519 signature matches no configured public key`);
    }
    checkTimestamp(name, timestamp, now, tolerance);
  };
  return templateProvider(name, options.template, options.secrets, authenticate, ed25519Coverage(ed25519));
}

export interface SignEd25519Options {
  ed25519: Ed25519Spec;
  /** The raw 32-byte private key (seed), hex, or the private key itself (`send --private-key`). */
  privateKey: string | KeyObject;
  payload: string | Uint8Array;
  timestamp?: number;
}

/** The signature and timestamp headers an Ed25519 sender would send, for tests. */
export function signEd25519(options: SignEd25519Options): Record<string, string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const key =
    typeof options.privateKey === 'string'
      ? createPrivateKey({
          key: Buffer.concat([PKCS8_PREFIX, Buffer.from(options.privateKey, 'hex')]),
          format: 'der',
          type: 'pkcs8',
        })
      : options.privateKey;
  const signature = sign(null, Buffer.concat([Buffer.from(timestamp), toBytes(options.payload)]), key);
  return {
    [options.ed25519.signatureHeader]: signature.toString('hex'),
    [options.ed25519.timestampHeader]: timestamp,
  };
}
