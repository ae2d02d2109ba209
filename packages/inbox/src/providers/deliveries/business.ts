import { randomInt, randomUUID } from 'node:crypto';
import {
  signCalendly,
  signClerk,
  signHubspot,
  signIntercom,
  signMailgun,
  signPaddle,
  signPostmark,
  signResend,
  signSquare,
  signTypeform,
  signWooCommerce,
  signZendesk,
} from '../catalogue/index.ts';
import { bodyOf, JSON_TYPE, seconds, split, svixBuilder, type DeliveryBuilder } from './shared.ts';

// Sample deliveries of the billing, commerce, CRM, support, e-mail and forms providers, in their documented shapes.
export const BUSINESS_DELIVERIES: Record<string, DeliveryBuilder> = {
  paddle: {
    type: 'transaction.completed',
    build(input) {
      const id = `evt_${randomUUID().replaceAll('-', '')}`;
      const { body, key } = bodyOf(
        input,
        {
          event_id: id,
          event_type: input.type,
          occurred_at: input.now.toISOString(),
          data: { id: 'txn_01' },
        },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'paddle-signature': signPaddle({
            payload: body,
            secret: input.secret,
            timestamp: seconds(input.now),
          }),
        },
      };
    },
  },
  square: {
    type: 'payment.updated',
    build(input) {
      const id = randomUUID();
      const { body, key } = bodyOf(
        input,
        {
          merchant_id: 'ML1',
          type: input.type,
          event_id: id,
          created_at: input.now.toISOString(),
          data: { type: 'payment', id: 'KkAk' },
        },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'x-square-hmacsha256-signature': signSquare({
            payload: body,
            secret: input.secret,
            url: input.url ?? '',
          }),
        },
      };
    },
  },
  hubspot: {
    type: 'contact.creation',
    build(input) {
      const item = {
        eventId: randomInt(1, 2 ** 47),
        subscriptionId: 2489,
        portalId: 62515,
        occurredAt: input.now.getTime(),
        subscriptionType: input.type,
        attemptNumber: 0,
        objectId: 123,
      };
      const id = `${item.portalId}:${item.subscriptionId}:${item.eventId}:${item.occurredAt}`;
      const body = input.payload ?? JSON.stringify([item]);
      const timestampMs = input.now.getTime();
      return {
        body,
        key: input.payload === undefined ? id : undefined,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'x-hubspot-request-timestamp': String(timestampMs),
          'x-hubspot-signature-v3': signHubspot({
            payload: body,
            secret: input.secret,
            url: input.url ?? '',
            timestampMs,
          }),
        },
      };
    },
  },
  intercom: {
    type: 'conversation.user.created',
    build(input) {
      const id = `notif_${randomUUID()}`;
      const { body, key } = bodyOf(
        input,
        {
          type: 'notification_event',
          id,
          topic: input.type,
          created_at: seconds(input.now),
          data: { item: {} },
        },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: { ...JSON_TYPE, 'x-hub-signature': signIntercom({ payload: body, secret: input.secret }) },
      };
    },
  },
  zendesk: {
    type: 'zen:event-type:ticket.created',
    build(input) {
      const id = String(randomInt(1, 2 ** 47));
      const timestamp = `${input.now.toISOString().slice(0, 19)}Z`;
      const { body } = bodyOf(
        input,
        {
          type: input.type,
          account_id: 123456,
          id: randomUUID(),
          time: timestamp,
          detail: { id: '35436' },
          event: {},
        },
        id,
      );
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'x-zendesk-webhook-invocation-id': id,
          'x-zendesk-webhook-signature-timestamp': timestamp,
          'x-zendesk-webhook-signature': signZendesk({ payload: body, secret: input.secret, timestamp }),
        },
      };
    },
  },
  postmark: {
    type: 'Delivery',
    build(input) {
      const message = randomUUID();
      const when = input.now.toISOString();
      const id = `${input.type}:${message}:john@example.com:${when}`;
      const { body, key } = bodyOf(
        input,
        {
          RecordType: input.type,
          MessageID: message,
          Recipient: 'john@example.com',
          DeliveredAt: when,
          ServerID: 23,
        },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: { ...JSON_TYPE, authorization: signPostmark({ secret: input.secret }) },
      };
    },
  },
  mailgun: {
    type: 'delivered',
    build(input) {
      const id = randomUUID();
      const signature = signMailgun({
        secret: input.secret,
        token: randomUUID().replaceAll('-', '').padEnd(50, '0'),
        timestamp: seconds(input.now),
      });
      const data = { id, event: input.type, timestamp: seconds(input.now), recipient: 'alice@example.com' };
      const body = input.payload ?? JSON.stringify({ signature, 'event-data': data });
      return {
        body,
        key: input.payload === undefined ? id : undefined,
        type: input.type,
        headers: JSON_TYPE,
      };
    },
  },
  resend: svixBuilder('email.delivered', signResend, { email_id: 'em_1', to: ['delivered@resend.dev'] }),
  clerk: svixBuilder('user.created', signClerk, { id: 'user_29w83sxmDNGwOuEthce5gg56FcC', object: 'user' }),
  typeform: {
    type: 'form_response',
    build(input) {
      const id = randomUUID();
      const { body, key } = bodyOf(
        input,
        { event_id: id, event_type: input.type, form_response: { form_id: 'lT4Z3j', answers: [] } },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'typeform-signature': signTypeform({ payload: body, secret: input.secret }),
        },
      };
    },
  },
  calendly: {
    type: 'invitee.created',
    build(input) {
      const uri = `https://api.calendly.com/scheduled_events/${randomUUID()}/invitees/${randomUUID()}`;
      const id = `${input.type}:${uri}`;
      const { body, key } = bodyOf(
        input,
        {
          event: input.type,
          created_at: input.now.toISOString(),
          payload: { uri, email: 'test@example.com' },
        },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'calendly-webhook-signature': signCalendly({
            payload: body,
            secret: input.secret,
            timestamp: seconds(input.now),
          }),
        },
      };
    },
  },
  woocommerce: {
    type: 'order.created',
    build(input) {
      const delivery = randomUUID();
      const id = `https://shop.example.com/:7:${delivery}`;
      const { body } = bodyOf(input, { id: 727, status: 'processing', total: '29.35' }, id);
      const [resource, event] = split(input.type);
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'x-wc-webhook-source': 'https://shop.example.com/',
          'x-wc-webhook-id': '7',
          'x-wc-webhook-delivery-id': delivery,
          'x-wc-webhook-topic': input.type,
          'x-wc-webhook-resource': resource,
          'x-wc-webhook-event': event ?? '',
          'x-wc-webhook-signature': signWooCommerce({ payload: body, secret: input.secret }),
        },
      };
    },
  },
};
