import { signStandardWebhook } from '../standard-webhooks.ts';
import type { CatalogueTemplate } from './template-data.ts';

/** Svix's own libraries refuse a timestamp more than 5 minutes away. */
export const SVIX_TOLERANCE_SECONDS = 300;

/**
 * Senders that deliver through Svix (Resend, Clerk): a `standard-webhooks` source (standard-webhooks.ts, which
 * reads the `svix-id`, `svix-timestamp` and `svix-signature` spelling of its headers as well) with Svix's
 * tolerance. The event key is the `svix-id`, which Svix keeps across its retries; the type is the body's `type`.
 */
export const SVIX_TEMPLATE: CatalogueTemplate = {
  type: 'standard-webhooks',
  toleranceSeconds: SVIX_TOLERANCE_SECONDS,
};

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
