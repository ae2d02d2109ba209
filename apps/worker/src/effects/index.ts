import { createInbox as createPlainInbox, type Inbox, type InboxOptions } from '@webhook-inbox/inbox';
import type { Mailer } from '../mail.ts';
import { markShopUninstalled, recordDataRequest, redactCustomer, redactShop, saveOrder } from './shopify.ts';
import {
  INVOICE_EVENTS,
  provisionAccount,
  recordCheckoutSubscription,
  recordInvoiceSubscription,
  sendWelcomeEmail,
  SUBSCRIPTION_EVENTS,
  upsertSubscription,
} from './stripe.ts';

export interface ExampleEffectsOptions extends InboxOptions {
  mailer: Mailer;
  /** Domain of the welcome email's Message-ID. */
  messageIdDomain: string;
  /**
   * Makes the Inbox the effects are registered on. Default: the package's `createInbox`. A wrapper sees every
   * effect as it is registered and every outcome (through `options.observer`), e.g. to trace them.
   */
  createInbox?: (options: InboxOptions) => Inbox;
}

/** The example product's effects, declared with the inbox package's public API and nothing else. */
export function createExampleInbox({
  mailer,
  messageIdDomain,
  createInbox = createPlainInbox,
  ...options
}: ExampleEffectsOptions): Inbox {
  return createInbox(options)
    .on('stripe', 'checkout.session.completed', {
      provisionAccount,
      sendWelcomeEmail: sendWelcomeEmail({ mailer, messageIdDomain }),
      recordCheckoutSubscription,
    })
    .on('stripe', SUBSCRIPTION_EVENTS, { upsertSubscription })
    .on('stripe', INVOICE_EVENTS, { recordInvoiceSubscription })
    .on('shopify', 'orders/create', { saveOrder })
    .on('shopify', 'app/uninstalled', { markShopUninstalled })
    .on('shopify', 'customers/data_request', { recordDataRequest })
    .on('shopify', 'customers/redact', { redactCustomer })
    .on('shopify', 'shop/redact', { redactShop });
}
