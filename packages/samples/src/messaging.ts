import { randomBytes, randomInt } from 'node:crypto';
import { createHash } from 'node:crypto';
import { signDiscord, signMeta, signSlack, signTwilio, signZoom } from '@webhook-inbox/providers';
import { jsonDelivery, seconds, split, type DeliveryBuilder } from './shared.ts';
import { isSlackSampleType, SLACK_SAMPLE_BODIES } from './slack.ts';

// Sample deliveries of the chat, telephony and meeting platforms, in their documented shapes.

/** A Discord-style snowflake: a 64-bit id, as decimal text. */
const snowflake = () => String(BigInt(randomInt(2 ** 40, 2 ** 47)) << 16n);

const INTERACTION_NUMBERS: Readonly<Record<string, number>> = {
  PING: 1,
  APPLICATION_COMMAND: 2,
  MESSAGE_COMPONENT: 3,
  APPLICATION_COMMAND_AUTOCOMPLETE: 4,
  MODAL_SUBMIT: 5,
};

export const MESSAGING_DELIVERIES: Record<string, DeliveryBuilder> = {
  discord: {
    type: 'APPLICATION_COMMAND',
    build(input) {
      const id = snowflake();
      if (input.privateKey === undefined)
        throw new TypeError('discord: a delivery is signed with a private key');
      const privateKey = input.privateKey;
      return jsonDelivery(input, {
        sample: {
          id,
          application_id: '1316523482392510000',
          type: INTERACTION_NUMBERS[input.type] ?? 2,
          token: 'aW50ZXJhY3Rpb24',
          version: 1,
          data: { id: snowflake(), name: 'hello', type: 1 },
        },
        key: id,
        sign: (payload) => {
          const timestamp = seconds(input.now);
          return {
            'x-signature-ed25519': signDiscord({ payload, privateKey, timestamp }),
            'x-signature-timestamp': String(timestamp),
          };
        },
      });
    },
  },
  slack: {
    type: 'app_mention',
    build(input) {
      const id = `Ev${randomBytes(5).toString('hex').toUpperCase()}`;
      // A type without a written body gets the envelope around a bare event of its type.
      const written = isSlackSampleType(input.type)
        ? SLACK_SAMPLE_BODIES[input.type]
        : { ...SLACK_SAMPLE_BODIES.app_mention, event: { type: input.type, user: 'U061F7AUR' } };
      return jsonDelivery(input, {
        sample: { ...written, event_id: id, event_time: seconds(input.now) },
        key: id,
        sign: (payload) => signSlack({ payload, secret: input.secret, timestamp: seconds(input.now) }),
      });
    },
  },
  twilio: {
    type: 'message.delivered',
    build(input) {
      const sid = `SM${randomBytes(16).toString('hex')}`;
      const token = `${randomBytes(16).toString('hex')}-${sid}`;
      const [kind, status] = split(input.type);
      const body =
        input.payload ??
        new URLSearchParams({
          AccountSid: 'AC0123456789abcdef0123456789abcdef',
          ApiVersion: '2010-04-01',
          From: '+15017122661',
          To: '+15558675310',
          MessageSid: sid,
          SmsSid: sid,
          ...(kind === 'call' ? { CallSid: `CA${sid.slice(2)}`, CallStatus: status ?? 'completed' } : {}),
          ...(kind === 'message'
            ? { MessageStatus: status ?? 'received', SmsStatus: status ?? 'received' }
            : {}),
        }).toString();
      return {
        body,
        key: token,
        type: input.type,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'i-twilio-idempotency-token': token,
          'x-twilio-signature': signTwilio({ url: input.url ?? '', payload: body, secret: input.secret }),
        },
      };
    },
  },
  zoom: {
    type: 'meeting.started',
    build(input) {
      const uuid = `${randomBytes(16).toString('base64')}`;
      const eventTs = input.now.getTime();
      return jsonDelivery(input, {
        sample: {
          event: input.type,
          event_ts: eventTs,
          payload: {
            account_id: 'AAAAAABBBB',
            object: {
              id: String(randomInt(1e9, 2 ** 40)),
              uuid,
              host_id: 'x1yCzABCDEfg23HiJKl4mN',
              topic: 'Standup',
            },
          },
        },
        key: `${input.type}:${eventTs}:${uuid}`,
        sign: (payload) => signZoom({ payload, secret: input.secret, timestamp: seconds(input.now) }),
      });
    },
  },
  meta: {
    type: 'whatsapp_business_account.messages',
    build(input) {
      const change = {
        field: 'messages',
        value: {
          messaging_product: 'whatsapp',
          metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
          contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
          messages: [
            {
              from: '16505551234',
              id: `wamid.${randomBytes(24).toString('base64')}`,
              timestamp: String(seconds(input.now)),
              text: { body: 'Does it come in another color?' },
              type: 'text',
            },
          ],
        },
      };
      const entryId = '102290129340398';
      return jsonDelivery(input, {
        sample: { object: 'whatsapp_business_account', entry: [{ id: entryId, changes: [change] }] },
        key: `${entryId}:${createHash('sha256').update(JSON.stringify(change)).digest('hex')}`,
        sign: (payload) => ({ 'x-hub-signature-256': signMeta({ payload, secret: input.secret }) }),
      });
    },
  },
};
