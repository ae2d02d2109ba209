/**
 * Square's payload types for `inbox.on('square', ...)`, from the `square` SDK's serialization schemas: their `Raw`
 * interfaces are the snake_case JSON Square sends, while the SDK's `Square.*Event` interfaces are the camelCase
 * objects its deserializer returns. The SDK types each event's `type` as a plain string and names it only in a doc
 * comment, so the map below pairs each type with its event interface (every `*Event` webhook interface of
 * `square` 46). An optional peer dependency: a team that handles Square events installs it and imports this
 * module once, which adds `square` to `ProviderPayloads`; no other module of the package names it.
 *
 * @example
 * import type { SquareInboxEvent } from '@webhook-inbox/providers/square';
 * createInbox().on('square', 'payment.updated', {
 *   settle: async ({ event, tx }) => settle(tx, event.payload.data?.object?.payment?.id), // typed
 * });
 */
import type { serialization as wire } from 'square';
import type { TypedInboxEvent } from '../payloads.ts';

/**
 * The receiver records a Square event under its body's `type` and refuses one without `event_id`, so both are
 * present and the type is the one registered.
 */
type Delivered<Raw extends { type?: unknown; event_id?: unknown }, T extends string> = Omit<
  Raw,
  'type' | 'event_id'
> & { type: T; event_id: string };

/** Square's event interfaces by the type each is sent under. */
interface SquareEvents {
  'bank_account.created': wire.BankAccountCreatedEvent.Raw;
  'bank_account.disabled': wire.BankAccountDisabledEvent.Raw;
  'bank_account.verified': wire.BankAccountVerifiedEvent.Raw;
  'booking.created': wire.BookingCreatedEvent.Raw;
  'booking.custom_attribute.owned.deleted': wire.BookingCustomAttributeOwnedDeletedEvent.Raw;
  'booking.custom_attribute.owned.updated': wire.BookingCustomAttributeOwnedUpdatedEvent.Raw;
  'booking.custom_attribute.visible.deleted': wire.BookingCustomAttributeVisibleDeletedEvent.Raw;
  'booking.custom_attribute.visible.updated': wire.BookingCustomAttributeVisibleUpdatedEvent.Raw;
  'booking.custom_attribute_definition.owned.created': wire.BookingCustomAttributeDefinitionOwnedCreatedEvent.Raw;
  'booking.custom_attribute_definition.owned.deleted': wire.BookingCustomAttributeDefinitionOwnedDeletedEvent.Raw;
  'booking.custom_attribute_definition.owned.updated': wire.BookingCustomAttributeDefinitionOwnedUpdatedEvent.Raw;
  'booking.custom_attribute_definition.visible.created': wire.BookingCustomAttributeDefinitionVisibleCreatedEvent.Raw;
  'booking.custom_attribute_definition.visible.deleted': wire.BookingCustomAttributeDefinitionVisibleDeletedEvent.Raw;
  'booking.custom_attribute_definition.visible.updated': wire.BookingCustomAttributeDefinitionVisibleUpdatedEvent.Raw;
  'booking.updated': wire.BookingUpdatedEvent.Raw;
  'card.automatically_updated': wire.CardAutomaticallyUpdatedEvent.Raw;
  'card.created': wire.CardCreatedEvent.Raw;
  'card.disabled': wire.CardDisabledEvent.Raw;
  'card.forgotten': wire.CardForgottenEvent.Raw;
  'card.updated': wire.CardUpdatedEvent.Raw;
  'catalog.version.updated': wire.CatalogVersionUpdatedEvent.Raw;
  'customer.created': wire.CustomerCreatedEvent.Raw;
  'customer.custom_attribute.deleted': wire.CustomerCustomAttributeDeletedEvent.Raw;
  'customer.custom_attribute.owned.deleted': wire.CustomerCustomAttributeOwnedDeletedEvent.Raw;
  'customer.custom_attribute.owned.updated': wire.CustomerCustomAttributeOwnedUpdatedEvent.Raw;
  'customer.custom_attribute.public.deleted': wire.CustomerCustomAttributeDeletedPublicEvent.Raw;
  'customer.custom_attribute.public.updated': wire.CustomerCustomAttributeUpdatedPublicEvent.Raw;
  'customer.custom_attribute.updated': wire.CustomerCustomAttributeUpdatedEvent.Raw;
  'customer.custom_attribute.visible.deleted': wire.CustomerCustomAttributeVisibleDeletedEvent.Raw;
  'customer.custom_attribute.visible.updated': wire.CustomerCustomAttributeVisibleUpdatedEvent.Raw;
  'customer.custom_attribute_definition.created': wire.CustomerCustomAttributeDefinitionCreatedEvent.Raw;
  'customer.custom_attribute_definition.deleted': wire.CustomerCustomAttributeDefinitionDeletedEvent.Raw;
  'customer.custom_attribute_definition.owned.created': wire.CustomerCustomAttributeDefinitionOwnedCreatedEvent.Raw;
  'customer.custom_attribute_definition.owned.deleted': wire.CustomerCustomAttributeDefinitionOwnedDeletedEvent.Raw;
  'customer.custom_attribute_definition.owned.updated': wire.CustomerCustomAttributeDefinitionOwnedUpdatedEvent.Raw;
  'customer.custom_attribute_definition.public.created': wire.CustomerCustomAttributeDefinitionCreatedPublicEvent.Raw;
  'customer.custom_attribute_definition.public.deleted': wire.CustomerCustomAttributeDefinitionDeletedPublicEvent.Raw;
  'customer.custom_attribute_definition.public.updated': wire.CustomerCustomAttributeDefinitionUpdatedPublicEvent.Raw;
  'customer.custom_attribute_definition.updated': wire.CustomerCustomAttributeDefinitionUpdatedEvent.Raw;
  'customer.custom_attribute_definition.visible.created': wire.CustomerCustomAttributeDefinitionVisibleCreatedEvent.Raw;
  'customer.custom_attribute_definition.visible.deleted': wire.CustomerCustomAttributeDefinitionVisibleDeletedEvent.Raw;
  'customer.custom_attribute_definition.visible.updated': wire.CustomerCustomAttributeDefinitionVisibleUpdatedEvent.Raw;
  'customer.deleted': wire.CustomerDeletedEvent.Raw;
  'customer.updated': wire.CustomerUpdatedEvent.Raw;
  'device.code.paired': wire.DeviceCodePairedEvent.Raw;
  'device.created': wire.DeviceCreatedEvent.Raw;
  'dispute.created': wire.DisputeCreatedEvent.Raw;
  'dispute.evidence.added': wire.DisputeEvidenceAddedEvent.Raw;
  'dispute.evidence.created': wire.DisputeEvidenceCreatedEvent.Raw;
  'dispute.evidence.deleted': wire.DisputeEvidenceDeletedEvent.Raw;
  'dispute.evidence.removed': wire.DisputeEvidenceRemovedEvent.Raw;
  'dispute.state.changed': wire.DisputeStateChangedEvent.Raw;
  'dispute.state.updated': wire.DisputeStateUpdatedEvent.Raw;
  'gift_card.activity.created': wire.GiftCardActivityCreatedEvent.Raw;
  'gift_card.activity.updated': wire.GiftCardActivityUpdatedEvent.Raw;
  'gift_card.created': wire.GiftCardCreatedEvent.Raw;
  'gift_card.customer_linked': wire.GiftCardCustomerLinkedEvent.Raw;
  'gift_card.customer_unlinked': wire.GiftCardCustomerUnlinkedEvent.Raw;
  'gift_card.updated': wire.GiftCardUpdatedEvent.Raw;
  'inventory.count.updated': wire.InventoryCountUpdatedEvent.Raw;
  'invoice.canceled': wire.InvoiceCanceledEvent.Raw;
  'invoice.created': wire.InvoiceCreatedEvent.Raw;
  'invoice.deleted': wire.InvoiceDeletedEvent.Raw;
  'invoice.payment_made': wire.InvoicePaymentMadeEvent.Raw;
  'invoice.published': wire.InvoicePublishedEvent.Raw;
  'invoice.refunded': wire.InvoiceRefundedEvent.Raw;
  'invoice.scheduled_charge_failed': wire.InvoiceScheduledChargeFailedEvent.Raw;
  'invoice.updated': wire.InvoiceUpdatedEvent.Raw;
  'job.created': wire.JobCreatedEvent.Raw;
  'job.updated': wire.JobUpdatedEvent.Raw;
  'labor.scheduled_shift.created': wire.LaborScheduledShiftCreatedEvent.Raw;
  'labor.scheduled_shift.deleted': wire.LaborScheduledShiftDeletedEvent.Raw;
  'labor.scheduled_shift.published': wire.LaborScheduledShiftPublishedEvent.Raw;
  'labor.scheduled_shift.updated': wire.LaborScheduledShiftUpdatedEvent.Raw;
  'labor.shift.created': wire.LaborShiftCreatedEvent.Raw;
  'labor.shift.deleted': wire.LaborShiftDeletedEvent.Raw;
  'labor.shift.updated': wire.LaborShiftUpdatedEvent.Raw;
  'labor.timecard.created': wire.LaborTimecardCreatedEvent.Raw;
  'labor.timecard.deleted': wire.LaborTimecardDeletedEvent.Raw;
  'labor.timecard.updated': wire.LaborTimecardUpdatedEvent.Raw;
  'location.created': wire.LocationCreatedEvent.Raw;
  'location.custom_attribute.owned.deleted': wire.LocationCustomAttributeOwnedDeletedEvent.Raw;
  'location.custom_attribute.owned.updated': wire.LocationCustomAttributeOwnedUpdatedEvent.Raw;
  'location.custom_attribute.visible.deleted': wire.LocationCustomAttributeVisibleDeletedEvent.Raw;
  'location.custom_attribute.visible.updated': wire.LocationCustomAttributeVisibleUpdatedEvent.Raw;
  'location.custom_attribute_definition.owned.created': wire.LocationCustomAttributeDefinitionOwnedCreatedEvent.Raw;
  'location.custom_attribute_definition.owned.deleted': wire.LocationCustomAttributeDefinitionOwnedDeletedEvent.Raw;
  'location.custom_attribute_definition.owned.updated': wire.LocationCustomAttributeDefinitionOwnedUpdatedEvent.Raw;
  'location.custom_attribute_definition.visible.created': wire.LocationCustomAttributeDefinitionVisibleCreatedEvent.Raw;
  'location.custom_attribute_definition.visible.deleted': wire.LocationCustomAttributeDefinitionVisibleDeletedEvent.Raw;
  'location.custom_attribute_definition.visible.updated': wire.LocationCustomAttributeDefinitionVisibleUpdatedEvent.Raw;
  'location.updated': wire.LocationUpdatedEvent.Raw;
  'loyalty.account.created': wire.LoyaltyAccountCreatedEvent.Raw;
  'loyalty.account.deleted': wire.LoyaltyAccountDeletedEvent.Raw;
  'loyalty.account.updated': wire.LoyaltyAccountUpdatedEvent.Raw;
  'loyalty.event.created': wire.LoyaltyEventCreatedEvent.Raw;
  'loyalty.program.created': wire.LoyaltyProgramCreatedEvent.Raw;
  'loyalty.program.updated': wire.LoyaltyProgramUpdatedEvent.Raw;
  'loyalty.promotion.created': wire.LoyaltyPromotionCreatedEvent.Raw;
  'loyalty.promotion.updated': wire.LoyaltyPromotionUpdatedEvent.Raw;
  'merchant.custom_attribute.owned.deleted': wire.MerchantCustomAttributeOwnedDeletedEvent.Raw;
  'merchant.custom_attribute.owned.updated': wire.MerchantCustomAttributeOwnedUpdatedEvent.Raw;
  'merchant.custom_attribute.visible.deleted': wire.MerchantCustomAttributeVisibleDeletedEvent.Raw;
  'merchant.custom_attribute.visible.updated': wire.MerchantCustomAttributeVisibleUpdatedEvent.Raw;
  'merchant.custom_attribute_definition.owned.created': wire.MerchantCustomAttributeDefinitionOwnedCreatedEvent.Raw;
  'merchant.custom_attribute_definition.owned.deleted': wire.MerchantCustomAttributeDefinitionOwnedDeletedEvent.Raw;
  'merchant.custom_attribute_definition.owned.updated': wire.MerchantCustomAttributeDefinitionOwnedUpdatedEvent.Raw;
  'merchant.custom_attribute_definition.visible.created': wire.MerchantCustomAttributeDefinitionVisibleCreatedEvent.Raw;
  'merchant.custom_attribute_definition.visible.deleted': wire.MerchantCustomAttributeDefinitionVisibleDeletedEvent.Raw;
  'merchant.custom_attribute_definition.visible.updated': wire.MerchantCustomAttributeDefinitionVisibleUpdatedEvent.Raw;
  'oauth.authorization.revoked': wire.OauthAuthorizationRevokedEvent.Raw;
  'online_checkout.location_settings.updated': wire.LocationSettingsUpdatedEvent.Raw;
  'online_checkout.merchant_settings.updated': wire.MerchantSettingsUpdatedEvent.Raw;
  'order.created': wire.OrderCreatedEvent.Raw;
  'order.custom_attribute.owned.deleted': wire.OrderCustomAttributeOwnedDeletedEvent.Raw;
  'order.custom_attribute.owned.updated': wire.OrderCustomAttributeOwnedUpdatedEvent.Raw;
  'order.custom_attribute.visible.deleted': wire.OrderCustomAttributeVisibleDeletedEvent.Raw;
  'order.custom_attribute.visible.updated': wire.OrderCustomAttributeVisibleUpdatedEvent.Raw;
  'order.custom_attribute_definition.owned.created': wire.OrderCustomAttributeDefinitionOwnedCreatedEvent.Raw;
  'order.custom_attribute_definition.owned.deleted': wire.OrderCustomAttributeDefinitionOwnedDeletedEvent.Raw;
  'order.custom_attribute_definition.owned.updated': wire.OrderCustomAttributeDefinitionOwnedUpdatedEvent.Raw;
  'order.custom_attribute_definition.visible.created': wire.OrderCustomAttributeDefinitionVisibleCreatedEvent.Raw;
  'order.custom_attribute_definition.visible.deleted': wire.OrderCustomAttributeDefinitionVisibleDeletedEvent.Raw;
  'order.custom_attribute_definition.visible.updated': wire.OrderCustomAttributeDefinitionVisibleUpdatedEvent.Raw;
  'order.fulfillment.updated': wire.OrderFulfillmentUpdatedEvent.Raw;
  'order.updated': wire.OrderUpdatedEvent.Raw;
  'payment.created': wire.PaymentCreatedEvent.Raw;
  'payment.updated': wire.PaymentUpdatedEvent.Raw;
  'payout.failed': wire.PayoutFailedEvent.Raw;
  'payout.paid': wire.PayoutPaidEvent.Raw;
  'payout.sent': wire.PayoutSentEvent.Raw;
  'refund.created': wire.RefundCreatedEvent.Raw;
  'refund.updated': wire.RefundUpdatedEvent.Raw;
  'subscription.created': wire.SubscriptionCreatedEvent.Raw;
  'subscription.updated': wire.SubscriptionUpdatedEvent.Raw;
  'team_member.created': wire.TeamMemberCreatedEvent.Raw;
  'team_member.updated': wire.TeamMemberUpdatedEvent.Raw;
  'team_member.wage_setting.updated': wire.TeamMemberWageSettingUpdatedEvent.Raw;
  'terminal.action.created': wire.TerminalActionCreatedEvent.Raw;
  'terminal.action.updated': wire.TerminalActionUpdatedEvent.Raw;
  'terminal.checkout.created': wire.TerminalCheckoutCreatedEvent.Raw;
  'terminal.checkout.updated': wire.TerminalCheckoutUpdatedEvent.Raw;
  'terminal.refund.created': wire.TerminalRefundCreatedEvent.Raw;
  'terminal.refund.updated': wire.TerminalRefundUpdatedEvent.Raw;
  'transfer_order.created': wire.TransferOrderCreatedEvent.Raw;
  'transfer_order.deleted': wire.TransferOrderDeletedEvent.Raw;
  'transfer_order.updated': wire.TransferOrderUpdatedEvent.Raw;
  'vendor.created': wire.VendorCreatedEvent.Raw;
  'vendor.updated': wire.VendorUpdatedEvent.Raw;
}

/** Every Square event type (`payment.created`, `invoice.payment_made`, ...), to its payload. */
export type SquarePayloads = {
  [T in Extract<keyof SquareEvents, string>]: Delivered<SquareEvents[T], T>;
};

export type SquareEventType = Extract<keyof SquarePayloads, string>;

/** A Square event, its payload typed by its type; for a union of types, a union `event.type` narrows. */
export type SquareInboxEvent<T extends SquareEventType = SquareEventType> = TypedInboxEvent<'square', T>;

declare module '../payloads.ts' {
  interface ProviderPayloads {
    square: SquarePayloads;
  }
}
