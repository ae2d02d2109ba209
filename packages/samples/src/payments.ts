import { randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { signAdyen, signPaypal, signSns } from '@webhook-inbox/providers';
import { jsonDelivery, type DeliveryBuilder } from './shared.ts';

// Sample deliveries of the senders whose signatures are not an HMAC header over the body (Adyen's per item, and the
// certificate-signed AWS SNS and PayPal), in their documented shapes.

/** Where the sample deliveries say their certificate is: documented hosts, served by tests and the bench. */
export const SAMPLE_CERTIFICATE_URLS: Readonly<Record<string, string>> = {
  'aws-sns': 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-webhook-inbox-sample.pem',
  paypal: 'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-webhook-inbox-sample',
};

function requireKey(type: string, privateKey: KeyObject | undefined): KeyObject {
  if (privateKey === undefined) {
    throw new TypeError(
      `${type}: a delivery is signed with the private key of ${type}'s certificate, which no source holds`,
    );
  }
  return privateKey;
}

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
  'aws-sns': {
    type: 'Notification',
    build(input) {
      const privateKey = requireKey('aws-sns', input.privateKey);
      const id = randomUUID();
      const message: Record<string, string> = {
        Type: input.type,
        MessageId: id,
        TopicArn: input.secret,
        Message: input.payload ?? JSON.stringify({ orderId: randomUUID(), status: 'placed' }),
        Timestamp: input.now.toISOString(),
      };
      if (input.type === 'Notification') message.Subject = 'Order placed';
      else {
        message.Token = randomBytes(32).toString('hex');
        message.SubscribeURL = `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${input.secret}&Token=${message.Token}`;
      }
      const sampleUrl = SAMPLE_CERTIFICATE_URLS['aws-sns'] as string;
      const certificateUrl = input.certificateUrl ?? sampleUrl;
      return {
        body: signSns({ message, privateKey, certificateUrl }),
        key: id,
        type: input.type,
        headers: {
          'content-type': 'text/plain; charset=UTF-8',
          'x-amz-sns-message-type': input.type,
          'x-amz-sns-message-id': id,
          'x-amz-sns-topic-arn': input.secret,
        },
      };
    },
  },
  paypal: {
    type: 'PAYMENT.CAPTURE.COMPLETED',
    build(input) {
      const privateKey = requireKey('paypal', input.privateKey);
      const id = `WH-${randomBytes(8).toString('hex').toUpperCase()}-${randomBytes(8).toString('hex').toUpperCase()}`;
      return jsonDelivery(input, {
        sample: {
          id,
          event_version: '1.0',
          create_time: input.now.toISOString(),
          resource_type: 'capture',
          event_type: input.type,
          summary: 'Payment completed for $ 21.0 USD',
          resource: { id: randomBytes(8).toString('hex').toUpperCase(), status: 'COMPLETED' },
        },
        key: id,
        sign: (payload) =>
          signPaypal({
            payload,
            privateKey,
            certificateUrl: input.certificateUrl ?? (SAMPLE_CERTIFICATE_URLS.paypal as string),
            webhookId: input.secret,
            time: input.now,
          }),
      });
    },
  },
};
