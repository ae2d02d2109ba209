import { randomUUID } from 'node:crypto';
import type { signSvix } from '../catalogue/svix-based.ts';

// What the catalogue's sample deliveries share: the input and output, and small helpers of their bodies.

/** What a delivery is built from. */
export interface DeliveryInput {
  /** The secret to sign with (a source's first). */
  secret: string;
  /** The event type to send (its provider's form: `push`, `issue.created`); see `CATALOGUE_DELIVERIES[type].type`. */
  type: string;
  /** The public URL the provider signs (Square, HubSpot). */
  url?: string | undefined;
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
  build(input: Required<Omit<DeliveryInput, 'payload' | 'url'>> & DeliveryInput): CatalogueDelivery;
}

export const JSON_TYPE = { 'content-type': 'application/json' };
export const seconds = (now: Date) => Math.floor(now.getTime() / 1000);

/** `issue.created` → [`issue`, `created`]; a type without a dot has no action. */
export function split(type: string): [string, string | undefined] {
  const dot = type.indexOf('.');
  return dot === -1 ? [type, undefined] : [type.slice(0, dot), type.slice(dot + 1)];
}

/** A JSON body: the caller's, else the sample; and the key the sample carries (none for the caller's). */
export function bodyOf(input: DeliveryInput, sample: Record<string, unknown>, key: string) {
  return input.payload === undefined
    ? { body: JSON.stringify(sample), key: key as string | undefined }
    : { body: input.payload, key: undefined };
}

/** A Svix-delivered sender (Resend, Clerk): the `svix-id` is the key, the body's `type` the type. */
export function svixBuilder(
  type: string,
  sign: typeof signSvix,
  data: Record<string, unknown>,
): DeliveryBuilder {
  return {
    type,
    build(input) {
      const id = `msg_${randomUUID()}`;
      const { body } = bodyOf(input, { type: input.type, created_at: input.now.toISOString(), data }, id);
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          ...sign({ id, payload: body, secret: input.secret, timestamp: seconds(input.now) }),
        },
      };
    },
  };
}
