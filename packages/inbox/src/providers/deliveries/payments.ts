import { randomBytes } from 'node:crypto';
import { signAdyen } from '../catalogue/index.ts';
import { jsonDelivery, type DeliveryBuilder } from './shared.ts';

// Sample deliveries of the payment processors whose signatures are not a header over the body, in their
// documented shapes.

export const PAYMENT_DELIVERIES: Record<string, DeliveryBuilder> = {
  adyen: {
    type: 'AUTHORISATION',
    build(input) {
      const item: Record<string, unknown> = {
        amount: { currency: 'EUR', value: 1130 },
        eventCode: input.type,
        eventDate: input.now.toISOString(),
        merchantAccountCode: 'YOUR_MERCHANT_ACCOUNT',
        merchantReference: 'YOUR_REFERENCE',
        pspReference: randomBytes(8).toString('hex').toUpperCase(),
        success: 'true',
      };
      item.additionalData = { hmacSignature: signAdyen({ item, secret: input.secret }) };
      return jsonDelivery(input, {
        sample: { live: 'false', notificationItems: [{ NotificationRequestItem: item }] },
        key: `YOUR_MERCHANT_ACCOUNT:${String(item.pspReference)}:${input.type}:true`,
        sign: () => ({}),
      });
    },
  },
};
