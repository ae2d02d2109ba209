import { parseJsonLossless } from '../json.ts';
import { shopifyShopDomain } from '@webhook-inbox/providers/shopify';
import type { LoadedEventRow } from '../sql/ledger.ts';
import { PermanentEffectError, type InboxEventBase, type ShopifyInboxEvent } from './types.ts';

/**
 * The event an effect receives, from its recorded row. Throws `PermanentEffectError` when it can never be
 * decoded (the payload was purged), or the JSON parser's error for a body that is not JSON.
 */
export function decodeEvent(row: LoadedEventRow): InboxEventBase {
  if (row.payload === null) throw new PermanentEffectError('the payload was purged by retention');
  const event: InboxEventBase = {
    provider: row.provider,
    eventId: row.event_id,
    type: row.type,
    headers: row.headers,
    receivedAt: row.received_at,
    // Only a run of 16+ digits can be an integer beyond 2^53; without one, plain JSON.parse is exact (and faster).
    payload: /\d{16}/.test(row.payload) ? parseJsonLossless(row.payload) : JSON.parse(row.payload),
  };
  if (row.provider === 'shopify') {
    const shopify: InboxEventBase & Pick<ShopifyInboxEvent, 'shopDomain'> = {
      ...event,
      shopDomain: shopifyShopDomain(event),
    };
    return shopify;
  }
  return event;
}
