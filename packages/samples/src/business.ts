import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import {
  signCalendly,
  signClerk,
  signCustomerio,
  signHubspot,
  signIntercom,
  signMailgun,
  signPaddle,
  signPostmark,
  signResend,
  signSendgrid,
  signSquare,
  signTypeform,
  signWooCommerce,
  signZendesk,
} from '@webhook-inbox/providers';
import { isPaddleSampleType, PADDLE_SAMPLE_BODIES } from './paddle.ts';
import { jsonDelivery, seconds, split, svixBuilder, type DeliveryBuilder } from './shared.ts';
import { isSquareSampleType, SQUARE_SAMPLE_BODIES } from './square.ts';

// Sample deliveries of the billing, commerce, CRM, support, e-mail and forms providers, in their documented shapes.
export const BUSINESS_DELIVERIES: Record<string, DeliveryBuilder> = {
  paddle: {
    type: 'transaction.completed',
    build(input) {
      const id = `evt_${randomUUID().replaceAll('-', '')}`;
      // A type without a written body gets the envelope and a bare entity; its own fields are missing.
      const written = isPaddleSampleType(input.type) ? PADDLE_SAMPLE_BODIES[input.type] : undefined;
      return jsonDelivery(input, {
        sample: {
          ...(written ?? { event_type: input.type, notification_id: null, data: { id: 'txn_01' } }),
          event_id: id,
          occurred_at: input.now.toISOString(),
        },
        key: id,
        sign: (payload) => ({
          'paddle-signature': signPaddle({ payload, secret: input.secret, timestamp: seconds(input.now) }),
        }),
      });
    },
  },
  square: {
    type: 'payment.updated',
    build(input) {
      const id = randomUUID();
      // A type without a written body gets the envelope and a bare entity; its own fields are missing.
      const written = isSquareSampleType(input.type) ? SQUARE_SAMPLE_BODIES[input.type] : undefined;
      return jsonDelivery(input, {
        sample: {
          ...(written ?? { merchant_id: 'ML1', type: input.type, data: { type: 'payment', id: 'KkAk' } }),
          event_id: id,
          created_at: input.now.toISOString(),
        },
        key: id,
        sign: (payload) => ({
          'x-square-hmacsha256-signature': signSquare({
            payload,
            secret: input.secret,
            url: input.url ?? '',
          }),
        }),
      });
    },
  },
  hubspot: {
    type: 'contact.creation',
    build(input) {
      const timestampMs = input.now.getTime();
      const item = {
        eventId: randomInt(1, 2 ** 47),
        subscriptionId: 2489,
        portalId: 62515,
        occurredAt: timestampMs,
        subscriptionType: input.type,
        attemptNumber: 0,
        objectId: 123,
      };
      return jsonDelivery(input, {
        sample: [item],
        key: `${item.portalId}:${item.subscriptionId}:${item.eventId}:${item.occurredAt}`,
        headers: { 'x-hubspot-request-timestamp': String(timestampMs) },
        sign: (payload) => ({
          'x-hubspot-signature-v3': signHubspot({
            payload,
            secret: input.secret,
            url: input.url ?? '',
            timestampMs,
          }),
        }),
      });
    },
  },
  intercom: {
    type: 'conversation.user.created',
    build(input) {
      const id = `notif_${randomUUID()}`;
      return jsonDelivery(input, {
        sample: {
          type: 'notification_event',
          id,
          topic: input.type,
          created_at: seconds(input.now),
          data: {},
        },
        key: id,
        sign: (payload) => ({ 'x-hub-signature': signIntercom({ payload, secret: input.secret }) }),
      });
    },
  },
  zendesk: {
    type: 'zen:event-type:ticket.created',
    build(input) {
      const id = String(randomInt(1, 2 ** 47));
      const timestamp = `${input.now.toISOString().slice(0, 19)}Z`;
      return jsonDelivery(input, {
        sample: {
          type: input.type,
          account_id: 123456,
          id: randomUUID(),
          time: timestamp,
          detail: { id: '35436' },
        },
        key: id,
        keyInHeader: true,
        headers: {
          'x-zendesk-webhook-invocation-id': id,
          'x-zendesk-webhook-signature-timestamp': timestamp,
        },
        sign: (payload) => ({
          'x-zendesk-webhook-signature': signZendesk({ payload, secret: input.secret, timestamp }),
        }),
      });
    },
  },
  postmark: {
    type: 'Delivery',
    build(input) {
      const message = randomUUID();
      const when = input.now.toISOString();
      return jsonDelivery(input, {
        sample: {
          RecordType: input.type,
          MessageID: message,
          Recipient: 'john@example.com',
          DeliveredAt: when,
        },
        key: `${input.type}:${message}:john@example.com:${when}`,
        sign: () => ({ authorization: signPostmark({ secret: input.secret }) }),
      });
    },
  },
  mailgun: {
    type: 'delivered',
    build(input) {
      const id = randomUUID();
      const token = randomUUID().replaceAll('-', '').padEnd(50, '0');
      const signature = signMailgun({ secret: input.secret, token, timestamp: seconds(input.now) });
      const data = { id, event: input.type, timestamp: seconds(input.now), recipient: 'alice@example.com' };
      // Mailgun's signature is inside the body, over a timestamp and token: no header signs it.
      return jsonDelivery(input, { sample: { signature, 'event-data': data }, key: id, sign: () => ({}) });
    },
  },
  resend: svixBuilder('email.delivered', signResend, { email_id: 'em_1', to: ['delivered@resend.dev'] }),
  clerk: svixBuilder('user.created', signClerk, { id: 'user_29w83sxmDNGwOuEthce5gg56FcC', object: 'user' }),
  customerio: {
    type: 'email.opened',
    build(input) {
      const id = `01${randomBytes(12).toString('hex').toUpperCase()}`;
      const [objectType, metric] = split(input.type);
      return jsonDelivery(input, {
        sample: {
          event_id: id,
          object_type: objectType,
          metric: metric ?? 'sent',
          timestamp: seconds(input.now),
          data: { customer_id: '42', identifiers: { id: '42' } },
        },
        key: id,
        sign: (payload) => signCustomerio({ payload, secret: input.secret, timestamp: seconds(input.now) }),
      });
    },
  },
  typeform: {
    type: 'form_response',
    build(input) {
      const id = randomUUID();
      return jsonDelivery(input, {
        sample: { event_id: id, event_type: input.type, form_response: { form_id: 'lT4Z3j', answers: [] } },
        key: id,
        sign: (payload) => ({ 'typeform-signature': signTypeform({ payload, secret: input.secret }) }),
      });
    },
  },
  calendly: {
    type: 'invitee.created',
    build(input) {
      const uri = `https://api.calendly.com/scheduled_events/${randomUUID()}/invitees/${randomUUID()}`;
      return jsonDelivery(input, {
        sample: {
          event: input.type,
          created_at: input.now.toISOString(),
          payload: { uri, email: 'test@example.com' },
        },
        key: `${input.type}:${uri}`,
        sign: (payload) => ({
          'calendly-webhook-signature': signCalendly({
            payload,
            secret: input.secret,
            timestamp: seconds(input.now),
          }),
        }),
      });
    },
  },
  woocommerce: {
    type: 'order.created',
    build(input) {
      const delivery = randomUUID();
      const [resource, event] = split(input.type);
      return jsonDelivery(input, {
        sample: { id: 727, status: 'processing', total: '29.35' },
        key: `https://shop.example.com/:7:${delivery}`,
        keyInHeader: true,
        headers: {
          'x-wc-webhook-source': 'https://shop.example.com/',
          'x-wc-webhook-id': '7',
          'x-wc-webhook-delivery-id': delivery,
          'x-wc-webhook-topic': input.type,
          'x-wc-webhook-resource': resource,
          'x-wc-webhook-event': event ?? '',
        },
        sign: (payload) => ({ 'x-wc-webhook-signature': signWooCommerce({ payload, secret: input.secret }) }),
      });
    },
  },
  sendgrid: {
    type: 'delivered',
    build(input) {
      const { privateKey } = input;
      if (privateKey === undefined) {
        throw new TypeError(
          'sendgrid: a delivery is signed with the private key of the verification key; a source holds only the public key',
        );
      }
      const id = randomUUID();
      const timestamp = seconds(input.now);
      return jsonDelivery(input, {
        sample: [
          {
            email: 'user@example.com',
            timestamp,
            event: input.type,
            sg_event_id: id,
            sg_message_id: 'msg_1',
          },
        ],
        key: id,
        sign: (payload) => ({
          'x-twilio-email-event-webhook-signature': signSendgrid({ payload, privateKey, timestamp }),
          'x-twilio-email-event-webhook-timestamp': String(timestamp),
        }),
      });
    },
  },
};
