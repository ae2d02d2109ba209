import { signStandardWebhook, standardWebhooksProvider } from '../standard-webhooks.ts';
import type { Provider } from '../types.ts';
import { sourceName, tolerance, type CatalogueProviderOptions } from './signing.ts';

/**
 * Senders that deliver through Svix (Resend, Clerk): Standard Webhooks with `svix-id`, `svix-timestamp` and
 * `svix-signature` headers, verified by standard-webhooks.ts, which accepts both header spellings. The event key
 * is the `svix-id`, which Svix keeps across its retries; the type is the body's `type`.
 */
export function svixSenderProvider(type: string, options: CatalogueProviderOptions): Provider {
  const name = sourceName(type, options.name);
  return standardWebhooksProvider({
    name,
    secrets: options.secrets,
    toleranceSeconds: tolerance(name, options.toleranceSeconds, SVIX_TOLERANCE_SECONDS),
  });
}

/** Svix's own libraries refuse a timestamp more than 5 minutes away. */
export const SVIX_TOLERANCE_SECONDS = 300;

/** Svix's retry schedule, which Resend and Clerk document as theirs. */
export const SVIX_RETRIES =
  'immediately, then 5 seconds, 5 minutes, 30 minutes, 2 hours, 5 hours, 10 hours and 10 hours after each ' +
  'failure (about 27 hours in all); then the message fails and can be replayed from the dashboard';

export interface SignSvixOptions {
  /** The `svix-id`: one per message, the same across its retries. */
  id: string;
  payload: string | Uint8Array;
  /** A `whsec_<base64>` signing secret. */
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/** The `svix-*` headers Svix would send with this message, for tests and the dev CLI. */
export function signSvix({
  id,
  payload,
  secret,
  timestamp = Math.floor(Date.now() / 1000),
}: SignSvixOptions) {
  return {
    'svix-id': id,
    'svix-timestamp': String(Math.floor(timestamp)),
    'svix-signature': signStandardWebhook({ id, payload, secret, timestamp }),
  };
}
