import { randomUUID, type KeyObject } from 'node:crypto';
import type { signResend } from '@webhook-inbox/providers';

// What the catalogue's sample deliveries share: the input and output, and small helpers of their bodies.

/** What a delivery is built from. */
export interface DeliveryInput {
  /** The secret to sign with (a source's first). */
  secret: string;
  /** The event type to send (its provider's form: `push`, `issue.created`); see `CATALOGUE_DELIVERIES[type].type`. */
  type: string;
  /** The public URL the provider signs (Square, HubSpot). */
  url?: string | undefined;
  /**
   * The private key of a provider that signs with one (SendGrid's ECDSA): its source's secret is the public key,
   * so the secret alone cannot sign.
   */
  privateKey?: KeyObject | undefined;
  /**
   * Where the message says the certificate of `privateKey` is (AWS SNS, PayPal); default a sample URL on the
   * provider's documented host, which tests and the bench serve.
   */
  certificateUrl?: string | undefined;
  /** When it is signed; default now. */
  now?: Date;
  /** A body to send instead of the sample (`inbox send --payload`); the key is then the provider's to read. */
  payload?: string | undefined;
}

/** A signed delivery: its exact body and headers, and the key and type the receiver records. */
export interface CatalogueDelivery {
  body: string;
  headers: Record<string, string>;
  /** The event key the receiver records; `undefined` when it comes from a `payload` given by the caller. */
  key: string | undefined;
  type: string;
}

export interface DeliveryBuilder {
  /** A sample event type, the one `inbox send` and the tests use by default. */
  type: string;
  build(
    input: Required<Omit<DeliveryInput, 'payload' | 'url' | 'privateKey' | 'certificateUrl'>> & DeliveryInput,
  ): CatalogueDelivery;
}

export const JSON_TYPE = { 'content-type': 'application/json' };
export const seconds = (now: Date) => Math.floor(now.getTime() / 1000);

/** `issue.created` → [`issue`, `created`]; a type without a dot has no action. */
export function split(type: string): [string, string | undefined] {
  const dot = type.indexOf('.');
  return dot === -1 ? [type, undefined] : [type.slice(0, dot), type.slice(dot + 1)];
}

/** One JSON delivery: its sample body, its key, its other headers, and the signing headers of the exact body. */
export interface JsonDelivery {
  sample: unknown;
  key: string;
  /** The key is a header's, kept when the caller gives the body; otherwise it is in the sample only. */
  keyInHeader?: boolean;
  headers?: Record<string, string>;
  sign(body: string): Record<string, string>;
}

/** The delivery of the sample (or of the caller's `payload`), signed. */
export function jsonDelivery(input: DeliveryInput, delivery: JsonDelivery): CatalogueDelivery {
  const body = input.payload ?? JSON.stringify(delivery.sample);
  const key = delivery.keyInHeader === true || input.payload === undefined ? delivery.key : undefined;
  return {
    body,
    key,
    type: input.type,
    headers: { ...JSON_TYPE, ...delivery.headers, ...delivery.sign(body) },
  };
}

/** A Svix-delivered sender (Resend, Clerk): the `svix-id` is the key, the body's `type` the type. */
export function svixBuilder(
  type: string,
  sign: typeof signResend,
  data: Record<string, unknown>,
): DeliveryBuilder {
  return {
    type,
    build(input) {
      const id = `msg_${randomUUID()}`;
      return jsonDelivery(input, {
        sample: { type: input.type, created_at: input.now.toISOString(), data },
        key: id,
        keyInHeader: true,
        sign: (payload) => sign({ id, payload, secret: input.secret, timestamp: seconds(input.now) }),
      });
    },
  };
}
