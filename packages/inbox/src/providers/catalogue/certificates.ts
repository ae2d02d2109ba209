import { X509Certificate } from 'node:crypto';
import { keyWeakness, type KeyRequirement } from '../public-keys.ts';

// The signing certificates that AWS SNS and PayPal name by URL inside the message they sign. The URL is chosen by
// whoever sent the request, so it is an SSRF vector and a forgery vector at once: it is checked against the
// provider's documented hosts before any request is made (https only, default port, no credentials, exact host),
// fetched with a deadline and a size limit through an injectable fetch, and cached by URL (a hit makes no
// request). SECURITY.md says why.

/** Why a certificate could not be used: never retryable except `certificate_unavailable`. */
export type CertificateErrorCode =
  /** The URL is not https on one of the provider's documented hosts: never fetched, never succeeds. */
  | 'certificate_url_refused'
  /** The host did not answer in time, or with an error status: the same request may succeed later. */
  | 'certificate_unavailable'
  /** What came back is too large, not a PEM certificate, or not valid now: never succeeds. */
  | 'certificate_invalid';

export class CertificateError extends Error {
  readonly code: CertificateErrorCode;
  readonly retryable: boolean;
  constructor(code: CertificateErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CertificateError';
    this.code = code;
    this.retryable = code === 'certificate_unavailable';
  }
}

/** `fetch` as the store calls it: a URL and an abort signal, a Response back. */
export type CertificateFetch = (url: string, init: { signal: AbortSignal }) => Promise<Response>;

export interface CertificateStoreOptions {
  /** The hosts certificates may come from, each an exact name or a pattern anchored at both ends. */
  allowedHosts: readonly (string | RegExp)[];
  /** Defaults to the global fetch; tests serve certificates from a loopback server through their own. */
  fetch?: CertificateFetch;
  /** The deadline of one fetch, body included. */
  timeoutMs?: number;
  /** The largest certificate body accepted. */
  maxBytes?: number;
  /** How many certificates are kept (the least recently added is dropped beyond it). */
  maxEntries?: number;
}

export interface CertificateStore {
  /** The certificate at `url`, fetched once; throws `CertificateError`. */
  get(url: string, now: Date): Promise<X509Certificate>;
  /** Whether `url` may be fetched at all (checked before any request). */
  allowed(url: string): boolean;
}

/**
 * AWS SNS: `sns.<region>.amazonaws.com`, and `sns.cn-<...>.amazonaws.com.cn` in the China partition, where the
 * region has AWS's shape (`us-east-1`, `us-gov-west-1`, `us-isob-east-1`). A looser label would admit other AWS
 * hosts whose first label anyone can choose, such as S3's `sns.s3.amazonaws.com` (a bucket named "sns").
 */
export const SNS_CERTIFICATE_HOSTS: readonly RegExp[] = [
  /^sns\.(?!cn-)[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d+\.amazonaws\.com$/,
  /^sns\.cn-[a-z]+-\d+\.amazonaws\.com\.cn$/,
];
/** PayPal: its live and sandbox API hosts. */
export const PAYPAL_CERTIFICATE_HOSTS: readonly string[] = ['api.paypal.com', 'api.sandbox.paypal.com'];

const CERTIFICATE_KEY: KeyRequirement = { type: 'rsa', minBits: 2048 };

/** A store of certificates from the given hosts only. */
export function createCertificateStore(options: CertificateStoreOptions): CertificateStore {
  // A redirect would leave the checked host for one nobody checked: refused, as an unavailable certificate.
  const fetchCertificate: CertificateFetch =
    options.fetch ?? ((url, init) => fetch(url, { ...init, redirect: 'error' }));
  const timeoutMs = options.timeoutMs ?? 2_000;
  const maxBytes = options.maxBytes ?? 16 * 1024;
  const maxEntries = options.maxEntries ?? 64;
  const cache = new Map<string, Promise<X509Certificate>>();

  const allowed = (url: string) => hostAllowed(url, options.allowedHosts);

  async function load(url: string): Promise<X509Certificate> {
    let response: Response;
    let bytes: Uint8Array;
    try {
      response = await fetchCertificate(url, { signal: AbortSignal.timeout(timeoutMs) });
      if (!response.ok) {
        throw new CertificateError('certificate_unavailable', `${url} answered ${response.status}`);
      }
      bytes = await readAtMost(response, maxBytes);
    } catch (error) {
      if (error instanceof CertificateError) throw error;
      throw new CertificateError(
        'certificate_unavailable',
        `${url} could not be fetched within ${timeoutMs} ms`,
        {
          cause: error,
        },
      );
    }
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(bytes);
    } catch (error) {
      throw new CertificateError('certificate_invalid', `${url} is not a PEM certificate`, { cause: error });
    }
    // Both providers sign with RSA; a short modulus could be factored, and then anyone signs.
    const weakness = keyWeakness(certificate.publicKey, CERTIFICATE_KEY);
    if (weakness !== undefined) {
      throw new CertificateError('certificate_invalid', `the key of ${url} ${weakness}`);
    }
    return certificate;
  }

  return {
    allowed,
    async get(url, now) {
      if (!allowed(url)) {
        throw new CertificateError(
          'certificate_url_refused',
          `${url.slice(0, 200)} is not on a documented host`,
        );
      }
      let pending = cache.get(url);
      if (pending === undefined) {
        pending = load(url);
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
        cache.set(url, pending);
        // A failed fetch is not cached: the next request tries again.
        pending.catch(() => cache.delete(url));
      }
      const certificate = await pending;
      if (now < new Date(certificate.validFrom) || now > new Date(certificate.validTo)) {
        throw new CertificateError('certificate_invalid', `${url} is not valid at ${now.toISOString()}`);
      }
      return certificate;
    },
  };
}

/** https, the default port, no credentials, and a host the provider documents. */
export function hostAllowed(url: string, hosts: readonly (string | RegExp)[]): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  if (
    parsed.protocol !== 'https:' ||
    parsed.port !== '' ||
    parsed.username !== '' ||
    parsed.password !== ''
  ) {
    return false;
  }
  return hosts.some((host) =>
    typeof host === 'string' ? parsed.hostname === host : host.test(parsed.hostname),
  );
}

/** The body, or `certificate_invalid` as soon as it passes `maxBytes`. */
async function readAtMost(response: Response, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (response.body === null) return new Uint8Array(0);
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > maxBytes)
      throw new CertificateError('certificate_invalid', `the certificate exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
