import { CertificateError, type CertificateErrorCode } from './catalogue/certificates.ts';
import { WebhookError, type WebhookErrorCode } from './errors.ts';
import type { HttpAnswer, Provider, SignedRequest, VerifiedEvent } from './types.ts';

/** A request as any HTTP framework hands it over: the method, the path, the headers and the body's exact bytes. */
export interface WebhookRequest {
  /** Unset: `POST`. */
  method?: string;
  /** The path and query as received (`/webhooks/github?a=b`), or the full URL; the providers that sign it read it. */
  url?: string;
  /** A `Headers` object, or Node's `IncomingHttpHeaders` (any case; several values of a name are joined by `, `). */
  headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The body exactly as it arrived: verifying a body parsed and serialized again fails. */
  rawBody: Uint8Array | string;
}

/** What a verification ends in: the authentic events (possibly none), a handshake to answer, or a refusal. */
export type Verification =
  | { ok: true; kind: 'events'; events: VerifiedEvent[]; answer?: HttpAnswer }
  | { ok: true; kind: 'handshake'; handshake: string; answer: HttpAnswer }
  | {
      ok: false;
      /** Stable: branch on it. `timestamp_out_of_tolerance` is a replay or a skewed clock. */
      code: WebhookErrorCode | CertificateErrorCode;
      /** Whether the same request may be verified later (a certificate host that did not answer). */
      retryable: boolean;
      message: string;
      error: WebhookError | CertificateError;
    };

function headerLookup(headers: WebhookRequest['headers']): SignedRequest['header'] {
  if (headers instanceof Headers) return (name) => headers.get(name);
  const byName = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined)
      byName.set(name.toLowerCase(), typeof value === 'string' ? value : value.join(', '));
  }
  return (name) => byName.get(name.toLowerCase());
}

/** The path and query of a full URL; a path is kept as it is. */
function pathOf(url: string): string {
  if (url.startsWith('/')) return url;
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

function signedRequest(request: WebhookRequest): SignedRequest {
  return {
    rawBody:
      typeof request.rawBody === 'string' ? new TextEncoder().encode(request.rawBody) : request.rawBody,
    header: headerLookup(request.headers),
    method: request.method?.toUpperCase() ?? 'POST',
    ...(request.url !== undefined && { url: pathOf(request.url) }),
  };
}

/**
 * Verifies one request with one provider (from `createProviders`, `createSourceProvider` or a provider's own
 * factory), as the receiver does: the signature over the raw bytes first, then the event key and type. A refusal
 * is returned, never thrown; anything else thrown is a fault of the caller or of this package.
 *
 * @example
 * const github = githubProvider({ secrets: [process.env.GITHUB_WEBHOOK_SECRET!] });
 * const result = await verify(github, { method: 'POST', url: req.url, headers: req.headers, rawBody });
 * if (!result.ok) return reply(400, result.code); // 'invalid_signature', 'missing_signature', ...
 */
export async function verify(
  provider: Provider,
  request: WebhookRequest,
  now: Date = new Date(),
): Promise<Verification> {
  const signed = signedRequest(request);
  try {
    if (provider.receiveAsync) return accepted(await provider.receiveAsync(signed, now));
    if (provider.receive) return accepted(provider.receive(signed, now));
    return { ok: true, kind: 'events', events: [provider.verify(signed, now)] };
  } catch (error) {
    if (error instanceof WebhookError || error instanceof CertificateError) {
      return { ok: false, code: error.code, retryable: error.retryable, message: error.message, error };
    }
    throw error;
  }

  function accepted(reception: ReturnType<NonNullable<Provider['receive']>>): Verification {
    if (reception.kind === 'handshake') return { ok: true, ...reception };
    return {
      ok: true,
      kind: 'events',
      events: reception.events,
      ...(provider.response && { answer: provider.response }),
    };
  }
}
