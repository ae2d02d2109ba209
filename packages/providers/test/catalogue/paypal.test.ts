import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { useCertificateServer, useTempFiles, sampleCredentials } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { catalogueEntry } from '../../src/catalogue/index.ts';
import { paypalProvider, paypalSignedText, signPaypal } from '../../src/catalogue/providers/paypal.ts';
import type { Reception } from '../../src/types.ts';
import { asyncCodeOf, itGuardsCertificateFetches } from './certificate-cases.ts';
import { request, tamper, without } from './support.ts';

// PayPal publishes no verifier on npm (its SDKs post the headers back to PayPal's verify-webhook-signature API), so
// the vector is the documented procedure: SHA256withRSA over "transmissionId|transmissionTime|webhookId|crc32(body)",
// signed here by the openssl command over a string this test writes out, with a certificate served from loopback.
const { privateKey, certificate } = sampleCredentials(catalogueEntry('paypal')!);
const WEBHOOK_ID = '8PT597110X687430LKGECATA';
const CERT_URL = 'https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
const NOW = new Date();
const certificates = useCertificateServer(() => certificate!);
const files = useTempFiles('paypal-');

let counter = 0;
const body = () =>
  JSON.stringify({
    id: `WH-9UG43882HX7271132-6E0871324L79496${String(++counter).padStart(2, '0')}`,
    event_version: '1.0',
    create_time: NOW.toISOString(),
    resource_type: 'capture',
    event_type: 'PAYMENT.CAPTURE.COMPLETED',
    summary: 'Payment completed for $ 21.0 USD',
    resource: { id: '80F85758S3080410K', status: 'COMPLETED' },
  });
const signed = (payload: string, options: { time?: Date; url?: string; webhookId?: string } = {}) =>
  signPaypal({
    payload,
    privateKey: privateKey!,
    certificateUrl: options.url ?? CERT_URL,
    webhookId: options.webhookId ?? WEBHOOK_ID,
    time: options.time ?? NOW,
  });
const provider = (secrets = [WEBHOOK_ID]) =>
  paypalProvider({ secrets, certificateFetch: certificates.fetch });
const paypal = provider();
const receive = (payload: string, headers: Record<string, string>, source = paypal, laterMs = 0) =>
  source.receiveAsync!(request(payload, headers), new Date(NOW.getTime() + laterMs));
const eventOf = (reception: Reception) =>
  reception.kind === 'events' ? reception.events.map((e) => [e.eventId, e.type]) : reception;

describe('paypal', () => {
  it('signs the CRC32 of the body in decimal (the CRC-32 check value of "123456789" is 3421780262)', () => {
    expect(paypalSignedText('id', 'time', 'hook', Buffer.from('123456789'))).toBe('id|time|hook|3421780262');
  });

  it('accepts a delivery signed by openssl over the string PayPal documents, keyed by id, typed by event_type', async () => {
    const payload = body();
    const { id } = JSON.parse(payload) as { id: string };
    const transmissionId = '69cd13f0-d67a-11e5-baa3-778b53f4ae55';
    const transmissionTime = NOW.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const keyFile = files.write('key.pem', privateKey!.export({ type: 'pkcs8', format: 'pem' }).toString());
    // node:zlib's CRC-32, the standard one (its check value is asserted above).
    const crc = crc32(payload);
    const signature = execFileSync('openssl', ['dgst', '-sha256', '-sign', keyFile], {
      input: `${transmissionId}|${transmissionTime}|${WEBHOOK_ID}|${crc}`,
    }).toString('base64');
    const headers = {
      'PAYPAL-TRANSMISSION-ID': transmissionId,
      'PAYPAL-TRANSMISSION-TIME': transmissionTime,
      'PAYPAL-TRANSMISSION-SIG': signature,
      'PAYPAL-CERT-URL': CERT_URL,
      'PAYPAL-AUTH-ALGO': 'SHA256withRSA',
    };
    expect(eventOf(await receive(payload, headers))).toEqual([[id, 'PAYMENT.CAPTURE.COMPLETED']]);
    // signPaypal makes the same headers for the same transmission.
    expect(
      signPaypal({
        payload,
        privateKey: privateKey!,
        certificateUrl: CERT_URL,
        webhookId: WEBHOOK_ID,
        time: NOW,
        transmissionId,
      }),
    ).toEqual(
      Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    );
  });

  it('accepts any configured webhook id (sandbox and live, or a move)', async () => {
    const payload = body();
    const both = provider(['OTHERWEBHOOKID1', WEBHOOK_ID]);
    expect(await asyncCodeOf(receive(payload, signed(payload), both))).toBe('no error');
  });

  it('refuses a tampered body, another webhook id, another key, another algorithm, a stale or missing signature', async () => {
    const payload = body();
    const headers = signed(payload);
    expect(await asyncCodeOf(receive(tamper(payload), headers))).toBe('invalid_signature');
    expect(await asyncCodeOf(receive(payload, signed(payload, { webhookId: 'SOMEONEELSES1' })))).toBe(
      'invalid_signature',
    );
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = signPaypal({
      payload,
      privateKey: other,
      certificateUrl: CERT_URL,
      webhookId: WEBHOOK_ID,
      time: NOW,
    });
    expect(await asyncCodeOf(receive(payload, forged))).toBe('invalid_signature');
    expect(await asyncCodeOf(receive(payload, { ...headers, 'paypal-auth-algo': 'SHA1withRSA' }))).toBe(
      'invalid_signature',
    );
    expect(await asyncCodeOf(receive(payload, without(headers, 'paypal-transmission-sig')))).toBe(
      'missing_signature',
    );
    const before = certificates.requests.length;
    const stale = signed(payload, { time: new Date(NOW.getTime() - 600_000) });
    expect(await asyncCodeOf(receive(payload, stale, provider()))).toBe('timestamp_out_of_tolerance');
    expect(certificates.requests.length).toBe(before);
  });

  it('accepts a transmission as old as the 3-day retry window once toleranceSeconds is raised to it', async () => {
    // PayPal does not document whether a retry keeps the first PAYPAL-TRANSMISSION-TIME (docs/providers.md): a
    // receiver that must accept such late retries raises the tolerance; the 300 s default refuses them.
    const payload = body();
    const late = signed(payload, { time: new Date(NOW.getTime() - 2 * 86_400_000) });
    expect(await asyncCodeOf(receive(payload, late, provider()))).toBe('timestamp_out_of_tolerance');
    const patient = paypalProvider({
      secrets: [WEBHOOK_ID],
      certificateFetch: certificates.fetch,
      toleranceSeconds: 3 * 86_400,
    });
    const { id } = JSON.parse(payload) as { id: string };
    expect(eventOf(await receive(payload, late, patient))).toEqual([[id, 'PAYMENT.CAPTURE.COMPLETED']]);
  });

  itGuardsCertificateFetches({
    certificates,
    hosts: 'api.paypal.com and api.sandbox.paypal.com',
    refusedUrls: [
      'https://api.paypal.com.evil.example/v1/notifications/certs/CERT-1',
      'http://api.paypal.com/v1/notifications/certs/CERT-1',
      'https://www.paypal.com/v1/notifications/certs/CERT-1',
      'https://169.254.169.254/latest/meta-data/',
      'file:///etc/passwd',
    ],
    freshProvider: () => {
      const source = provider();
      return (url, laterMs) => {
        const payload = body();
        return receive(payload, signed(payload, { url }), source, laterMs);
      };
    },
  });

  it('takes webhook ids as its secrets', () => {
    expect(() => paypalProvider({ secrets: ['not a webhook id!'] })).toThrow(TypeError);
  });
});
