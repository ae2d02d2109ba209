import { X509Certificate } from 'node:crypto';
import { keyWeakness, type KeyRequirement } from '../public-keys.ts';

// The signing certificates that AWS SNS and PayPal name by URL inside the message they sign. The URL is chosen by
// whoever sent the request, so it is an SSRF vector and a forgery vector at once: it is checked against the
// provider's documented hosts before any request is made (https only, default port, no credentials, exact host),
// fetched with a deadline and a size limit through an injectable fetch, and cached by URL, failures included (a
// hit makes no request). SECURITY.md says why.

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
  /** How long a fetched certificate is kept, measured with the `now` of the requests. */
  ttlMs?: number;
  /**
   * How long a failed fetch is remembered: a request naming that URL meanwhile gets the same refusal without a
   * request of its own. The receiver's `Retry-After` for `certificate_unavailable` is as long.
   */
  failureTtlMs?: number;
  /** How many fetches may be under way at once; beyond it a new URL is `certificate_unavailable` unfetched. */
  maxConcurrentFetches?: number;
}

export interface CertificateStore {
  /** The certificate at `url`, fetched once per `ttlMs` however many ask at once; throws `CertificateError`. */
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

/**
 * A store of certificates from the given hosts only. A request names the URL, so whoever sends requests decides
 * how many fetches are made: one URL is fetched once however many requests name it at once (they share the
 * fetch), once per `ttlMs` when it succeeds and once per `failureTtlMs` when it fails, and at most
 * `maxConcurrentFetches` URLs are fetched at a time, so a flood of distinct URLs is bounded too.
 */
export function createCertificateStore(options: CertificateStoreOptions): CertificateStore {
  // A redirect would leave the checked host for one nobody checked: refused, as an unavailable certificate.
  const fetchCertificate: CertificateFetch =
    options.fetch ?? ((url, init) => fetch(url, { ...init, redirect: 'error' }));
  const timeoutMs = options.timeoutMs ?? 2_000;
  const maxBytes = options.maxBytes ?? 16 * 1024;
  const maxEntries = options.maxEntries ?? 64;
  const ttlMs = options.ttlMs ?? 3_600_000;
  const failureTtlMs = options.failureTtlMs ?? 5_000;
  const maxConcurrentFetches = options.maxConcurrentFetches ?? 4;
  /** Fetched or being fetched, until `until` (ms). */
  const cache = new Map<string, { certificate: Promise<X509Certificate>; until: number }>();
  /** Failed, refused again without a request until `until` (ms); as many entries as `cache` at most. */
  const failures = new Map<string, { error: CertificateError; until: number }>();
  let fetching = 0;

  const allowed = (url: string) => hostAllowed(url, options.allowedHosts);

  async function load(url: string): Promise<X509Certificate> {
    let bytes: Uint8Array;
    try {
      const response = await fetchCertificate(url, { signal: AbortSignal.timeout(timeoutMs) });
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

  /** One fetch of `url`, shared by whoever asks while it runs and kept for `ttlMs`; a failure is remembered. */
  function startFetch(url: string, at: number): Promise<X509Certificate> {
    if (fetching >= maxConcurrentFetches) {
      throw new CertificateError(
        'certificate_unavailable',
        `${maxConcurrentFetches} certificate fetches are under way; ${url.slice(0, 200)} waits for the retry`,
      );
    }
    fetching += 1;
    failures.delete(url);
    const certificate = load(url).finally(() => (fetching -= 1));
    const entry = { certificate, until: at + ttlMs };
    keep(cache, url, entry, maxEntries);
    certificate.catch((error: unknown) => {
      if (cache.get(url) === entry) cache.delete(url);
      if (error instanceof CertificateError)
        keep(failures, url, { error, until: at + failureTtlMs }, maxEntries);
    });
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
      const at = now.getTime();
      const failure = failures.get(url);
      if (failure !== undefined && at < failure.until) throw failure.error;
      const cached = cache.get(url);
      const certificate = await (cached !== undefined && at < cached.until
        ? cached.certificate
        : startFetch(url, at));
      if (now < new Date(certificate.validFrom) || now > new Date(certificate.validTo)) {
        throw new CertificateError('certificate_invalid', `${url} is not valid at ${now.toISOString()}`);
      }
      return certificate;
    },
  };
}

/** `value` under `key`, the oldest entry dropped when the map holds `max`. */
function keep<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as string);
  map.set(key, value);
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
