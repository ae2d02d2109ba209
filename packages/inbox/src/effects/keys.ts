import { createHash } from 'node:crypto';
import { keyOf } from '../event-key.ts';

/**
 * The idempotency key of one effect for one event: the same event key and effect name always give the same key,
 * on any machine, across retries, redeliveries and replays. Pass it to downstream APIs that deduplicate (Stripe's
 * `Idempotency-Key`, an SMTP `Message-ID`). 43 url-safe characters after the prefix, well under Stripe's 255.
 *
 * @example
 * eventIdempotencyKey('stripe', 'evt_123', 'sendWelcomeEmail'); // 'wi_e_...'
 */
export function eventIdempotencyKey(provider: string, eventId: string, effect: string): string {
  return `wi_e_${digest(['event', provider, eventId, effect])}`;
}

/**
 * The idempotency key of an effect scoped wider than one event: once per `scope` (e.g. per account) whichever
 * event asks. Two effects with different names never share a key.
 *
 * @example
 * scopedIdempotencyKey('sendWelcomeEmail', 'account:cus_123'); // 'wi_s_...'
 */
export function scopedIdempotencyKey(effect: string, scope: string): string {
  return `wi_s_${digest(['scope', effect, scope])}`;
}

/**
 * An RFC 5322 Message-ID derived from an idempotency key: a re-sent message carries the same id, so a receiving
 * system (and our tests) can tell a duplicate from a second message.
 */
export function messageIdFor(idempotencyKey: string, domain: string): string {
  return `<${idempotencyKey}@${domain}>`;
}

// NUL-separated (`keyOf`) so that ('a:b', 'c') and ('a', 'b:c') never collide.
function digest(parts: readonly string[]): string {
  return createHash('sha256')
    .update(keyOf(...parts))
    .digest('base64url');
}
