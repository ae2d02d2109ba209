import { randomInt } from 'node:crypto';
import { signDiscord } from '../catalogue/index.ts';
import { jsonDelivery, seconds, type DeliveryBuilder } from './shared.ts';

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
};
