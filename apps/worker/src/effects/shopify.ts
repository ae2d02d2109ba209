import { shopifyComplianceRequests, shopifyOrders, shopifyShops } from '../schema.ts';
import { PermanentEffectError, type DatabaseEffectFn, type ShopifyInboxEvent } from '@webhook-inbox/inbox';
import { and, eq, inArray, or, sql } from 'drizzle-orm';
import { z } from 'zod';

/**
 * A Shopify id. The payload was parsed losslessly, so ids beyond 2^53 arrive as `bigint` and smaller ones as
 * exact numbers; both become `bigint`, never passing through a rounded double.
 */
const shopifyId = z
  .union([z.bigint(), z.number().int().refine(Number.isSafeInteger, { error: 'is not an exact integer' })])
  .transform((value) => BigInt(value));

const orderSchema = z.object({
  id: shopifyId,
  order_number: shopifyId.nullish(),
  name: z.string().nullish(),
  email: z.string().nullish(),
  customer: z.object({ id: shopifyId }).nullish(),
  total_price: z.string().nullish(),
  currency: z.string().nullish(),
  financial_status: z.string().nullish(),
  created_at: z.iso.datetime({ offset: true }).nullish(),
});

const customerRequestSchema = z.object({
  shop_domain: z.string().nullish(),
  customer: z.object({ id: shopifyId }),
  orders_requested: z.array(shopifyId).nullish(),
  orders_to_redact: z.array(shopifyId).nullish(),
  data_request: z.object({ id: shopifyId }).nullish(),
});

/** Parses a payload or fails the event for good: a payload that does not parse will not parse on a retry. */
export function parsePayload<S extends z.ZodType>(schema: S, event: ShopifyInboxEvent): z.output<S> {
  const result = schema.safeParse(event.payload);
  if (result.success) return result.data;
  // Paths and messages only: the values are customer data.
  const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`);
  throw new PermanentEffectError(`${event.type} payload does not match its schema: ${issues.join('; ')}`);
}

const shopRedactSchema = z.object({ shop_domain: z.string().nullish() });
/** `app/uninstalled` sends the Shop object. */
const uninstalledShopSchema = z.object({ myshopify_domain: z.string().nullish() });

/**
 * The shop an effect that deletes or deactivates acts on: the one its signed payload names (`shop_domain`, or a
 * Shop's `myshopify_domain`), which must also be the delivery's `X-Shopify-Shop-Domain`. Shopify signs only the
 * body, so the header alone could name any shop. The receiver refuses a mismatch at ingest; this checks again, so
 * the effect does not depend on how the event was recorded.
 */
function payloadShop(event: ShopifyInboxEvent, field: string, named: string | null | undefined): string {
  if (named === undefined || named === null || named === '') {
    throw new PermanentEffectError(
      `${event.type} payload: ${field} is missing; the shop to act on is unknown`,
    );
  }
  if (named !== event.shopDomain) {
    throw new PermanentEffectError(
      `${event.type} payload: ${field} names another shop than X-Shopify-Shop-Domain; nothing was changed`,
    );
  }
  return named;
}

/** `orders/create`: upserts the order (and remembers the shop). */
export const saveOrder: DatabaseEffectFn<ShopifyInboxEvent<'orders/create'>> = async ({ event, tx }) => {
  const order = parsePayload(orderSchema, event);
  const values = {
    shopDomain: event.shopDomain,
    orderId: order.id,
    orderNumber: order.order_number ?? null,
    name: order.name ?? null,
    email: order.email ?? null,
    customerId: order.customer?.id ?? null,
    totalPrice: order.total_price ?? null,
    currency: order.currency ?? null,
    financialStatus: order.financial_status ?? null,
    orderCreatedAt: order.created_at ? new Date(order.created_at) : null,
  };
  await tx.insert(shopifyShops).values({ shopDomain: event.shopDomain }).onConflictDoNothing();
  await tx
    .insert(shopifyOrders)
    .values(values)
    .onConflictDoUpdate({
      target: [shopifyOrders.shopDomain, shopifyOrders.orderId],
      set: { ...values, updatedAt: sql`now()` },
    });
};

/** `app/uninstalled`: the shop its payload names is marked, at the time Shopify says it happened. */
export const markShopUninstalled: DatabaseEffectFn<ShopifyInboxEvent<'app/uninstalled'>> = async ({
  event,
  tx,
}) => {
  const shopDomain = payloadShop(
    event,
    'myshopify_domain',
    parsePayload(uninstalledShopSchema, event).myshopify_domain,
  );
  const triggeredAt = Date.parse(event.headers['x-shopify-triggered-at'] ?? '');
  const uninstalledAt = Number.isNaN(triggeredAt) ? event.receivedAt : new Date(triggeredAt);
  await tx
    .insert(shopifyShops)
    .values({ shopDomain, installed: false, uninstalledAt })
    .onConflictDoUpdate({
      target: shopifyShops.shopDomain,
      set: { installed: false, uninstalledAt, updatedAt: sql`now()` },
    });
};

/** `customers/data_request`: recorded, for the shop owner to be sent the customer's data. */
export const recordDataRequest: DatabaseEffectFn<ShopifyInboxEvent<'customers/data_request'>> = async ({
  event,
  tx,
}) => {
  const request = parsePayload(customerRequestSchema, event);
  // A plain insert: the ledger runs this once per event, and a second run would be a bug worth an error.
  await tx.insert(shopifyComplianceRequests).values({
    eventId: event.eventId,
    shopDomain: event.shopDomain,
    topic: event.type,
    customerId: request.customer.id,
    orderIds: request.orders_requested ?? [],
    dataRequestId: request.data_request?.id ?? null,
  });
};

/** `customers/redact`: deletes the customer's orders in that shop, and records that it did. */
export const redactCustomer: DatabaseEffectFn<ShopifyInboxEvent<'customers/redact'>> = async ({
  event,
  tx,
}) => {
  const request = parsePayload(customerRequestSchema, event);
  const shopDomain = payloadShop(event, 'shop_domain', request.shop_domain);
  const orderIds = request.orders_to_redact ?? [];
  const deleted = await tx
    .delete(shopifyOrders)
    .where(
      and(
        eq(shopifyOrders.shopDomain, shopDomain),
        orderIds.length > 0
          ? or(eq(shopifyOrders.customerId, request.customer.id), inArray(shopifyOrders.orderId, orderIds))
          : eq(shopifyOrders.customerId, request.customer.id),
      ),
    )
    .returning({ orderId: shopifyOrders.orderId });
  await tx.insert(shopifyComplianceRequests).values({
    eventId: event.eventId,
    shopDomain,
    topic: event.type,
    customerId: request.customer.id,
    orderIds,
    redactedOrders: deleted.length,
    redactedAt: sql`now()`,
  });
};

/** `shop/redact` (48 hours after uninstall): deletes every order row and the shop row, and records that it did. */
export const redactShop: DatabaseEffectFn<ShopifyInboxEvent<'shop/redact'>> = async ({ event, tx }) => {
  const shopDomain = payloadShop(event, 'shop_domain', parsePayload(shopRedactSchema, event).shop_domain);
  const deleted = await tx
    .delete(shopifyOrders)
    .where(eq(shopifyOrders.shopDomain, shopDomain))
    .returning({ orderId: shopifyOrders.orderId });
  await tx.delete(shopifyShops).where(eq(shopifyShops.shopDomain, shopDomain));
  await tx.insert(shopifyComplianceRequests).values({
    eventId: event.eventId,
    shopDomain,
    topic: event.type,
    redactedOrders: deleted.length,
    redactedAt: sql`now()`,
  });
};
