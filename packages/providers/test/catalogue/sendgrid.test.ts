import { generateKeyPairSync } from 'node:crypto';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { describe, expect, it } from 'vitest';
import { sendgridProvider, signSendgrid } from '../../src/catalogue/providers/sendgrid.ts';
import { codeOf, expectKeyPairForgeriesRefused, request, tamper } from './support.ts';

// @sendgrid/eventwebhook verifies (verifySignature) but does not sign: the tests sign with a P-256 key of their
// own, as SendGrid does with the account's, and both verifiers must agree.
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const PUBLIC_KEY = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const NOW = new Date('2026-12-05T00:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const BODY = `${JSON.stringify([
  {
    email: 'a@example.com',
    timestamp: 1733356800,
    event: 'processed',
    sg_event_id: 'rbtnWrG1DVDGGGFHFyun0A==',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
  },
  {
    email: 'a@example.com',
    timestamp: 1733356801,
    event: 'delivered',
    sg_event_id: 'ZHVtbXlfZXZlbnRfaWQ=',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
  },
])}\r\n`;
const sendgrid = sendgridProvider({ secrets: [PUBLIC_KEY] });
const headers = (signature: string, timestamp = T) => ({
  'X-Twilio-Email-Event-Webhook-Signature': signature,
  'X-Twilio-Email-Event-Webhook-Timestamp': String(timestamp),
});

describe('sendgrid', () => {
  it("@sendgrid/eventwebhook's verifySignature accepts what signSendgrid signs, and refuses a tampered body", () => {
    const webhook = new EventWebhook();
    const key = webhook.convertPublicKeyToECDSA(PUBLIC_KEY);
    const signature = signSendgrid({ payload: BODY, privateKey, timestamp: T });
    expect(webhook.verifySignature(key, BODY, signature, String(T))).toBe(true);
    expect(webhook.verifySignature(key, tamper(BODY), signature, String(T))).toBe(false);
  });

  it('receives one event per item of the batch, keyed by sg_event_id; verify refuses a batch (was one batch:<hash> event)', () => {
    const delivery = request(BODY, headers(signSendgrid({ payload: BODY, privateKey, timestamp: T })));
    const reception = sendgrid.receive(delivery, NOW);
    expect(reception.kind === 'events' && reception.batch).toBe(true);
    const events = reception.kind === 'events' ? reception.events : [];
    expect(events.map((e) => [e.eventId, e.type])).toEqual([
      ['rbtnWrG1DVDGGGFHFyun0A==', 'processed'],
      ['ZHVtbXlfZXZlbnRfaWQ=', 'delivered'],
    ]);
    expect(codeOf(() => sendgrid.verify(delivery, NOW))).toBe('invalid_payload');
  });

  it('refuses a tampered body, another key, a moved timestamp, a missing or malformed signature, a stale one', () => {
    expectKeyPairForgeriesRefused({
      provider: sendgrid,
      sign: signSendgrid,
      privateKey,
      otherPrivateKey: other.privateKey,
      body: BODY,
      signatureHeader: 'x-twilio-email-event-webhook-signature',
      timestampHeader: 'x-twilio-email-event-webhook-timestamp',
      unsigned: 'AAAA',
      now: NOW,
    });
  });
});
