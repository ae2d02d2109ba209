import { decodeJsonBody } from '../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../types.ts';
import {
  checkBodySignature,
  keptHeaders,
  secretKeys,
  signBody,
  sourceName,
  bodyString,
  type BodySignature,
  type CatalogueProviderOptions,
} from './signing.ts';

/** A provider whose whole scheme is one header holding the HMAC of the raw body, and nothing signed beside it. */
export interface BodyHmacScheme {
  /** The provider's type, and the default source name. */
  type: string;
  signature: BodySignature;
  /** Delivery headers kept with the event (lower-case names). */
  kept: readonly string[];
  /** The event key and type of an authentic delivery; throws `InvalidPayloadError` when one is missing. */
  identify(
    name: string,
    request: SignedRequest,
    body: Record<string, unknown>,
  ): { eventId: string; type: string };
}

/** An `identify` for a body keyed and typed by two of its string fields (`invalid_payload` when either is absent). */
export function byBodyFields(idField: string, typeField: string): BodyHmacScheme['identify'] {
  return (name, _request, body) => ({
    eventId: bodyString(name, body, idField),
    type: bodyString(name, body, typeField),
  });
}

/** The provider for a body-HMAC scheme: signature first, then the body is decoded and the event identified. */
export function bodyHmacProvider(scheme: BodyHmacScheme, options: CatalogueProviderOptions): Provider {
  const name = sourceName(scheme.type, options.name);
  const keys = secretKeys(name, options.secrets);

  return {
    name,
    verify(request: SignedRequest): VerifiedEvent {
      checkBodySignature(name, request, keys, scheme.signature);
      const { text, object } = decodeJsonBody(name, request.rawBody);
      const { eventId, type } = scheme.identify(name, request, object);
      return {
        provider: name,
        eventId,
        type,
        payloadText: text,
        headers: keptHeaders(request, scheme.kept),
        body: object,
      };
    },
  };
}

/** The signature header value the scheme's sender would send for this body. */
export function signBodyHmac(scheme: BodyHmacScheme, payload: string | Uint8Array, secret: string): string {
  return signBody(scheme.signature, secret, payload);
}
