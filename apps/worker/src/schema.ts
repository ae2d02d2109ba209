/**
 * The example product's tables: what apps/worker's example effects write. A team's own tables live in its own
 * schema, next to its effects; the inbox's tables are in `@webhook-inbox/db`. Migrations: drizzle/example.
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** Example product table: one account per Stripe customer. */
export const accounts = pgTable('accounts', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  stripeCustomerId: text('stripe_customer_id').notNull().unique(),
  email: text('email').notNull(),
  name: text('name'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Example product table. `eventCreatedAt` is the `created` of the Stripe event that last changed the row. */
export const subscriptions = pgTable('subscriptions', {
  stripeSubscriptionId: text('stripe_subscription_id').primaryKey(),
  customerId: text('customer_id').notNull(),
  status: text('status').notNull(),
  priceId: text('price_id'),
  currentPeriodEnd: timestamp('current_period_end', { withTimezone: true }),
  canceledAt: timestamp('canceled_at', { withTimezone: true }),
  eventCreatedAt: timestamp('event_created_at', { withTimezone: true }).notNull(),
  /**
   * Written from a checkout session or an invoice, not from a `customer.subscription.*` event: a placeholder
   * that any subscription event replaces, whatever its `created`.
   */
  provisional: boolean('provisional').notNull().default(false),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Example product table. Shopify ids exceed 2^53, so they are bigint in SQL and bigint in JS. */
export const shopifyOrders = pgTable(
  'shopify_orders',
  {
    shopDomain: text('shop_domain').notNull(),
    orderId: bigint('order_id', { mode: 'bigint' }).notNull(),
    orderNumber: bigint('order_number', { mode: 'bigint' }),
    name: text('name'),
    email: text('email'),
    customerId: bigint('customer_id', { mode: 'bigint' }),
    /** Money kept as the decimal string Shopify sends. */
    totalPrice: text('total_price'),
    currency: text('currency'),
    financialStatus: text('financial_status'),
    orderCreatedAt: timestamp('order_created_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.shopDomain, t.orderId] }),
    index('shopify_orders_customer_idx').on(t.shopDomain, t.customerId),
  ],
);

/** Shops that have sent us webhooks; `app/uninstalled` marks them. */
export const shopifyShops = pgTable('shopify_shops', {
  shopDomain: text('shop_domain').primaryKey(),
  installed: boolean('installed').notNull().default(true),
  uninstalledAt: timestamp('uninstalled_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Shopify's mandatory compliance webhooks (`customers/data_request`, `customers/redact`, `shop/redact`), one row
 * per event key: what was asked, and for a redaction, when it was carried out and how many order rows it removed.
 */
export const shopifyComplianceRequests = pgTable(
  'shopify_compliance_requests',
  {
    eventId: text('event_id').primaryKey(),
    shopDomain: text('shop_domain').notNull(),
    topic: text('topic').notNull(),
    customerId: bigint('customer_id', { mode: 'bigint' }),
    /** Order ids named by the request (`orders_requested` / `orders_to_redact`). */
    orderIds: bigint('order_ids', { mode: 'bigint' })
      .array()
      .notNull()
      .default(sql`'{}'::bigint[]`),
    dataRequestId: bigint('data_request_id', { mode: 'bigint' }),
    redactedOrders: integer('redacted_orders'),
    redactedAt: timestamp('redacted_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('shopify_compliance_requests_shop_idx').on(t.shopDomain, t.createdAt)],
);
