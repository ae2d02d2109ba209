import { sign, verify, type KeyObject } from 'node:crypto';
import { InvalidPayloadError } from '../../errors.ts';
import { assertSecrets, decodeJsonBody, toBytes } from '../../shared.ts';
import { ed25519PublicKey } from '../../public-keys.ts';
import type { Provider, Reception, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import {
  bodyString,
  sourceName,
  timestampThenBody,
  type KeyPairSignOptions,
  tolerance,
  type CatalogueProviderOptions,
  checkKeyPairSignature,
} from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const DISCORD_FACTS: ProviderFacts = {
  scheme:
    'X-Signature-Ed25519: <hex Ed25519 signature of X-Signature-Timestamp + raw body>, verified with the ' +
    "application's public key (hex, from the developer portal); no shared secret",
  eventKey: "the interaction's id; refused as invalid_payload when absent",
  eventType: 'the interaction type by name (PING, APPLICATION_COMMAND, MESSAGE_COMPONENT, MODAL_SUBMIT, ...)',
  toleranceSeconds: 300,
  retries: 'none: an interaction must be answered within 3 seconds, and is not redelivered',
  quirks:
    'PING must be answered {"type":1} (a handshake, verified, never recorded); Discord also sends deliberately ' +
    'bad signatures when the URL is saved, and the endpoint must refuse them with 401 (every signature refusal ' +
    'of this source is a 401); a recorded interaction is answered {"type":5} (deferred), and the effect ' +
    'finishes it through the interaction token within 15 minutes; autocomplete cannot be deferred',
  requiredOptions: [],
  docs: 'https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers',
};

/** Interaction types by number (https://discord.com/developers/docs/interactions/receiving-and-responding). */
const INTERACTION_TYPES: Readonly<Record<number, string>> = {
  1: 'PING',
  2: 'APPLICATION_COMMAND',
  3: 'MESSAGE_COMPONENT',
  4: 'APPLICATION_COMMAND_AUTOCOMPLETE',
  5: 'MODAL_SUBMIT',
};

/** The answer to Discord's PING (interaction response type 1, PONG). */
const PONG = { status: 200, contentType: 'application/json', body: '{"type":1}' } as const;
/**
 * The answer once an interaction is recorded: type 5, DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, valid for commands,
 * components and modal submits. Discord needs an answer within 3 seconds; the effect edits the deferred reply.
 */
const DEFERRED = { status: 200, contentType: 'application/json', body: '{"type":5}' } as const;

const HEX_SIGNATURE = /^[0-9a-fA-F]{128}$/;

/**
 * The KeyObject of an application public key as the developer portal shows it (64 hex digits), refused when it
 * could let anyone sign (public-keys.ts); `where` names it in the error.
 */
export function discordPublicKey(hex: string, where = 'discord: the public key'): KeyObject {
  return ed25519PublicKey(where, hex);
}

/** Whether `signatureHex` is an Ed25519 signature of `timestamp` + `rawBody` under any of the keys. */
export function verifyDiscordSignature(
  keys: readonly KeyObject[],
  timestamp: string,
  rawBody: Uint8Array,
  signatureHex: string,
): boolean {
  if (!HEX_SIGNATURE.test(signatureHex)) return false;
  const message = timestampThenBody(timestamp, rawBody);
  const signature = Buffer.from(signatureHex, 'hex');
  return keys.some((key) => verify(null, message, key, signature));
}

/**
 * Discord interactions: `X-Signature-Ed25519` is the hex Ed25519 signature of `X-Signature-Timestamp` followed by
 * the raw body, made with the application's private key; `secrets` are the application's public keys (hex).
 * Discord documents no tolerance; 5 minutes by default. `verify` returns the PING that Discord sends to validate
 * the URL as an event of type `PING`; `receive` (what the receiver calls) answers it `{"type":1}` and records
 * nothing. Discord also sends deliberately bad signatures when the URL is saved and requires a 401 for them:
 * `signatureRefusalStatus`. A recorded interaction is answered `{"type":5}` (deferred), the one answer that needs
 * no application logic; the effect finishes the reply with the interaction token.
 *
 * Event key: the interaction `id`. Type: the interaction type's name, e.g. `APPLICATION_COMMAND`.
 */
export function discordProvider(options: CatalogueProviderOptions): Provider {
  const name = sourceName('discord', options.name);
  assertSecrets(name, options.secrets);
  const keys = options.secrets.map((secret, index) =>
    discordPublicKey(secret, `${name}: secret #${index + 1}`),
  );
  const toleranceSeconds = tolerance(name, options.toleranceSeconds, DISCORD_FACTS.toleranceSeconds ?? 300);

  const verifyInteraction = (request: SignedRequest, now: Date): VerifiedEvent => {
    checkKeyPairSignature(name, request, now, toleranceSeconds, {
      signatureHeader: 'x-signature-ed25519',
      timestampHeader: 'x-signature-timestamp',
      sender: 'Discord',
      verify: (timestamp, rawBody, signature) => verifyDiscordSignature(keys, timestamp, rawBody, signature),
      mismatch:
        'X-Signature-Ed25519 is not a signature by any configured public key; is the key the ' +
        "application's PUBLIC KEY from the developer portal, and the body the raw request body?",
    });

    const { text, object } = decodeJsonBody(name, request.rawBody);
    const type = typeof object.type === 'number' ? INTERACTION_TYPES[object.type] : undefined;
    if (type === undefined)
      throw new InvalidPayloadError(`${name}: the interaction type is missing or unknown`);
    return {
      provider: name,
      eventId: bodyString(name, object, 'id'),
      type,
      payloadText: text,
      headers: {},
      body: object,
    };
  };

  return {
    name,
    verify: verifyInteraction,
    receive(request: SignedRequest, now: Date): Reception {
      const event = verifyInteraction(request, now);
      return event.type === 'PING'
        ? { kind: 'handshake', handshake: 'discord', answer: PONG }
        : { kind: 'events', events: [event] };
    },
    response: DEFERRED,
    signatureRefusalStatus: 401,
  };
}

/** The `X-Signature-Ed25519` value Discord would send, made with an Ed25519 private key (tests and the dev CLI). */
export function signDiscord({ payload, privateKey, timestamp }: KeyPairSignOptions): string {
  const message = timestampThenBody(String(Math.floor(timestamp)), toBytes(payload));
  return sign(null, message, privateKey).toString('hex');
}

/** The catalogue's discord: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'discord',
  facts: DISCORD_FACTS,
  create: discordProvider,
  eventFacts: [
    { label: 'Application', paths: ['/application_id'] },
    { label: 'Guild', paths: ['/guild_id'] },
  ],
  subject: ['/guild_id', '/data/guild_id', '/user/id'],
  excerpt: ['/type', '/id', '/application_id', '/guild_id'],
};
