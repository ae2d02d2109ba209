import { readFileSync } from 'node:fs';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { UsageError } from './errors.ts';

// `send --private-key` / `--certificate-url`: the catalogue providers and the `ed25519` template, which sign with a
// private key their receiver verifies with the public half (a source holds only that half, so its secret cannot sign).

/** The key each such provider signs with, as Node names its type (and the curve, for ECDSA). */
const SIGNING_KEYS: Readonly<Record<string, { type: string; curve?: string; label: string }>> = {
  discord: { type: 'ed25519', label: 'an Ed25519 key' },
  ed25519: { type: 'ed25519', label: 'an Ed25519 key' },
  sendgrid: { type: 'ec', curve: 'prime256v1', label: 'an ECDSA P-256 key' },
  'aws-sns': { type: 'rsa', label: 'the RSA key of its certificate' },
  paypal: { type: 'rsa', label: 'the RSA key of its certificate' },
};

/** The providers whose message names the URL of the signing certificate. */
const CERTIFICATE_SIGNED = new Set(['aws-sns', 'paypal']);

export interface SigningOptions {
  /** A PEM file holding the private key (`--private-key`). */
  privateKey?: string | undefined;
  /** The certificate URL the message names (`--certificate-url`). */
  certificateUrl?: string | undefined;
}

export interface Signing {
  privateKey?: KeyObject;
  certificateUrl?: string;
}

/**
 * The private key and certificate URL to sign a delivery of catalogue type `type` for source `name` with, checked
 * against what the provider signs with. Refusals are usage errors naming the file, never its content.
 */
export function signingFor(name: string, type: string, options: SigningOptions): Signing {
  const wanted = SIGNING_KEYS[type];
  if (wanted === undefined) {
    if (options.privateKey !== undefined || options.certificateUrl !== undefined) {
      throw new UsageError(
        `--private-key and --certificate-url are for sources verified with a public key (${Object.keys(SIGNING_KEYS).join(', ')}); "${name}" is of type ${type}`,
      );
    }
    return {};
  }
  if (options.privateKey === undefined) {
    throw new UsageError(
      `source "${name}" (${type}) is verified with a public key: pass --private-key <file.pem> holding ${wanted.label}`,
    );
  }
  const certified = CERTIFICATE_SIGNED.has(type);
  if (certified && options.certificateUrl === undefined) {
    throw new UsageError(
      `source "${name}" (${type}) fetches the signing certificate from the message: pass --certificate-url <url>`,
    );
  }
  if (!certified && options.certificateUrl !== undefined) {
    throw new UsageError(
      `--certificate-url is for ${[...CERTIFICATE_SIGNED].join(' and ')} sources; "${name}" is of type ${type}`,
    );
  }
  const key = readPrivateKey(options.privateKey);
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType !== wanted.type || (wanted.curve !== undefined && curve !== wanted.curve)) {
    const found = curve === undefined ? key.asymmetricKeyType : `${key.asymmetricKeyType} ${curve}`;
    throw new UsageError(
      `--private-key: ${options.privateKey} holds an ${found ?? 'unknown'} key; ${type} signs with ${wanted.label}`,
    );
  }
  return certified ? { privateKey: key, certificateUrl: options.certificateUrl } : { privateKey: key };
}

/** The key of a PEM file; Node's parse errors are not passed on (they could quote the file). */
function readPrivateKey(file: string): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--private-key: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new UsageError(`--private-key: ${file} holds no unencrypted PEM private key`);
  }
}
