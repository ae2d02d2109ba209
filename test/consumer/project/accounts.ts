/** The team's own table that the inbox README's example (example.ts) provisions. */
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const accounts = pgTable('accounts', {
  stripeCustomerId: text('stripe_customer_id').primaryKey(),
  email: text('email').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
