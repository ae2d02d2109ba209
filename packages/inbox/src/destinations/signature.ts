import { createHmac } from 'node:crypto';

/** The three Standard Webhooks headers of one delivery. */
export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a delivery as the Standard Webhooks specification says: HMAC-SHA256 over `{id}.{timestamp}.{body}` under
 * each secret's bytes, base64, each prefixed `v1,` and separated by spaces. Every live secret signs, so a receiver
 * that holds either the old or the new secret verifies during a rotation.
 *
 * @example
 * signDelivery('wi_e_abc', new Date(), '{"a":1}', [secret]);
 * // { 'webhook-id': 'wi_e_abc', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,K5oZ...' }
 */
export function signDelivery(
  id: string,
  at: Date,
  body: string,
  secrets: readonly Buffer[],
): SignatureHeaders {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signed = `${id}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (secret) => `v1,${createHmac('sha256', secret).update(signed).digest('base64')}`,
  );
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
