import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { InvalidPayloadError, InvalidSignatureError } from '../../errors.ts';
import { assertSecrets, checkTimestamp, decodeJsonBody, toBytes } from '../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../types.ts';
import type { ProviderFacts } from './facts.ts';
import {
  bodyString,
  signatureHeader,
  sourceName,
  timestampThenBody,
  type KeyPairSignOptions,
  tolerance,
  signedTimestampHeader,
  type CatalogueProviderOptions,
} from './signing.ts';

export const DISCORD_FACTS: ProviderFacts = {
  scheme:
    'X-Signature-Ed25519: <hex Ed25519 signature of X-Signature-Timestamp + raw body>, verified with the ' +
    "application's public key (hex, from the developer portal); no shared secret",
  eventKey: "the interaction's id; refused as invalid_payload when absent",
  eventType: 'the interaction type by name (PING, APPLICATION_COMMAND, MESSAGE_COMPONENT, MODAL_SUBMIT, ...)',
  toleranceSeconds: 300,
  retries: 'none: an interaction must be answered within 3 seconds, and is not redelivered',
  quirks:
    'PING must be answered {"type":1} (a handshake, not an event); Discord also sends deliberately bad ' +
    'signatures when the URL is saved, and the endpoint must refuse them with 401',
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

// An Ed25519 public key as SPKI DER is this fixed prefix followed by the 32 raw key bytes.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const HEX_SIGNATURE = /^[0-9a-fA-F]{128}$/;

/** The KeyObject of an application public key as the developer portal shows it (64 hex digits). */
export function discordPublicKey(hex: string): KeyObject {
  if (!HEX_KEY.test(hex)) throw new TypeError('discord: a public key is 64 hex digits (32 bytes)');
  return createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]),
    format: 'der',
    type: 'spki',
  });
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
 * Discord documents no tolerance; 5 minutes by default. The PING that Discord sends to validate the URL is
 * returned as an event of type `PING`: answering it `{"type":1}` without recording it is the sources layer's
 * handshake, which is why this provider is not in the CATALOGUE table.
 *
 * Event key: the interaction `id`. Type: the interaction type's name, e.g. `APPLICATION_COMMAND`.
 */
export function discordProvider(options: CatalogueProviderOptions): Provider {
  const name = sourceName('discord', options.name);
  assertSecrets(name, options.secrets);
  const keys = options.secrets.map((secret) => discordPublicKey(secret));
  const toleranceSeconds = tolerance(name, options.toleranceSeconds, DISCORD_FACTS.toleranceSeconds ?? 300);

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const signature = signatureHeader(name, request, 'x-signature-ed25519', 'Discord');
      const { text: timestampText, value: timestamp } = signedTimestampHeader(
        name,
        request,
        'x-signature-timestamp',
      );
      if (!verifyDiscordSignature(keys, timestampText, request.rawBody, signature)) {
        throw new InvalidSignatureError(
          `${name}: X-Signature-Ed25519 is not a signature by any configured public key; is the key the ` +
            "application's PUBLIC KEY from the developer portal, and the body the raw request body?",
        );
      }
      checkTimestamp(name, timestamp, now, toleranceSeconds);

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
      };
    },
  };
}

/** The `X-Signature-Ed25519` value Discord would send, made with an Ed25519 private key (tests and the dev CLI). */
export function signDiscord({ payload, privateKey, timestamp }: KeyPairSignOptions): string {
  const message = timestampThenBody(String(Math.floor(timestamp)), toBytes(payload));
  return sign(null, message, privateKey).toString('hex');
}
