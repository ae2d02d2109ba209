import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  useCertificateServer,
  useTempFiles,
  sampleCredentials,
  selfSignedCertificate,
} from '@webhook-inbox/testing';
import MessageValidator from 'sns-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsSnsProvider, signSns } from '../../src/catalogue/providers/aws-sns.ts';
import { catalogueEntry } from '../../src/catalogue/index.ts';
import type { Reception } from '../../src/types.ts';
import { asyncCodeOf, itGuardsCertificateFetches } from './certificate-cases.ts';
import { request } from './support.ts';

// AWS SNS against its own validator, sns-validator (github.com/aws/aws-js-sns-message-validator), which fetches the
// certificate itself over https: it is pointed at a loopback TLS server holding our signing certificate. Our
// provider gets the same certificate through its injectable fetch from a loopback HTTP server that counts requests.
const { privateKey, certificate } = sampleCredentials(catalogueEntry('aws-sns')!);
const PEM = certificate!;
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:orders';
const CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem';
const NOW = new Date();
const certificates = useCertificateServer(() => PEM);
const files = useTempFiles('sns-');

let validatorServer: https.Server;
let validatorOrigin = '';
let savedCa: unknown;
beforeAll(async () => {
  // The TLS certificate of the validator's loopback https server, trusted through the global agent it uses.
  const tls = selfSignedCertificate('localhost', ['-addext', 'subjectAltName=DNS:localhost']);
  const cert = tls.certificate;
  validatorServer = https.createServer({ key: tls.privateKeyPem, cert }, (_request, response) =>
    response.end(PEM),
  );
  await new Promise<void>((resolve) => validatorServer.listen(0, '127.0.0.1', resolve));
  validatorOrigin = `https://localhost:${(validatorServer.address() as AddressInfo).port}`;
  savedCa = https.globalAgent.options.ca;
  https.globalAgent.options.ca = cert;
});
afterAll(async () => {
  https.globalAgent.options.ca = savedCa as string | undefined;
  validatorServer.closeAllConnections();
  await new Promise((resolve) => validatorServer.close(resolve));
});

/** What sns-validator says of a body whose certificate URL is moved to the loopback https server. */
function validatorVerdict(body: string): Promise<string> {
  const message = JSON.parse(body) as Record<string, string>;
  message.SigningCertURL = `${validatorOrigin}/SimpleNotificationService-0123456789abcdef.pem`;
  return new Promise((resolve) =>
    new MessageValidator(/^localhost:\d+$/).validate(message, (error) =>
      resolve(error ? `refused: ${error.message}` : 'accepted'),
    ),
  );
}

let counter = 0;
const notification = (fields: Record<string, string> = {}) => ({
  Type: 'Notification',
  MessageId: `22b80b92-fdea-4c2c-8f9d-bdfb0c7bf3${String(++counter).padStart(2, '0')}`,
  TopicArn: TOPIC,
  Subject: 'Order placed',
  Message: '{"orderId":"o-1","status":"placed"}',
  Timestamp: NOW.toISOString(),
  ...fields,
});
const signed = (message: Record<string, string>, options: { version?: '1' | '2'; url?: string } = {}) =>
  signSns({
    message,
    privateKey: privateKey!,
    certificateUrl: options.url ?? CERT_URL,
    signatureVersion: options.version,
  });
const provider = () => awsSnsProvider({ secrets: [TOPIC], certificateFetch: certificates.fetch });
const sns = provider();
const receive = (body: string, source = sns, laterMs = 0) =>
  source.receiveAsync!(request(body, {}), new Date(NOW.getTime() + laterMs));
const eventOf = (reception: Reception) =>
  reception.kind === 'events' ? reception.events.map((e) => [e.eventId, e.type]) : reception;
/** A copy of the message with `field` set to another value: valid JSON that its signature does not cover. */
const changed = (body: string, field: string, value: string) =>
  JSON.stringify({ ...(JSON.parse(body) as object), [field]: value });

describe('aws-sns', () => {
  it('sns-validator accepts what signSns signs (SignatureVersion 1 and 2), and refuses a changed message', async () => {
    for (const version of ['1', '2'] as const) {
      const body = signed(notification(), { version });
      expect(await validatorVerdict(body)).toBe('accepted');
      expect(await validatorVerdict(changed(body, 'Message', 'other'))).toMatch(/^refused/);
    }
    // A confirmation has no Subject (sns-validator would sign one if present; AWS's list for confirmations has none).
    const { Subject: _subject, ...fields } = notification({
      Type: 'SubscriptionConfirmation',
      Token: 'abc',
      SubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription',
    });
    expect(await validatorVerdict(signed(fields))).toBe('accepted');
  });

  it('accepts a message signed by openssl over the string AWS documents, as sns-validator does', async () => {
    const message = notification();
    // AWS's procedure, written out here rather than taken from the provider: "Name\nvalue\n" in byte order of names.
    const text = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      .map((field) => `${field}\n${message[field as keyof typeof message]}\n`)
      .join('');
    const key = privateKey!.export({ type: 'pkcs8', format: 'pem' }).toString();
    const keyFile = files.write('key.pem', key);
    const signature = execFileSync('openssl', ['dgst', '-sha256', '-sign', keyFile], {
      input: text,
    }).toString('base64');
    const body = JSON.stringify({
      ...message,
      SignatureVersion: '2',
      Signature: signature,
      SigningCertURL: CERT_URL,
    });
    expect(await validatorVerdict(body)).toBe('accepted');
    expect(eventOf(await receive(body))).toEqual([[message.MessageId, 'Notification']]);
  });

  it('keys a message by MessageId and types it by Type; a SubscriptionConfirmation is recorded, never confirmed', async () => {
    const message = notification();
    expect(eventOf(await receive(signed(message, { version: '1' })))).toEqual([
      [message.MessageId, 'Notification'],
    ]);
    const subscribeUrl = `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=t0k`;
    const { Subject: _subject, ...confirmation } = notification({
      Type: 'SubscriptionConfirmation',
      Token: 't0k',
      SubscribeURL: subscribeUrl,
    });
    const reception = await receive(signed(confirmation));
    expect(eventOf(reception)).toEqual([[confirmation.MessageId, 'SubscriptionConfirmation']]);
    expect(reception.kind === 'events' && JSON.parse(reception.events[0]!.payloadText)).toMatchObject({
      SubscribeURL: subscribeUrl,
    });
    expect(certificates.requests.filter((path) => path.includes('ConfirmSubscription'))).toEqual([]);
  });

  it('refuses a tampered message, another key, a foreign topic, a stale timestamp, a missing signature', async () => {
    const body = signed(notification());
    expect(await asyncCodeOf(receive(changed(body, 'Message', '{"orderId":"o-2"}')))).toBe(
      'invalid_signature',
    );
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = signSns({ message: notification(), privateKey: other, certificateUrl: CERT_URL });
    expect(await asyncCodeOf(receive(forged))).toBe('invalid_signature');
    const before = certificates.requests.length;
    const foreign = signed(notification({ TopicArn: 'arn:aws:sns:us-east-1:999999999999:attacker' }));
    expect(await asyncCodeOf(receive(foreign, provider()))).toBe('invalid_signature');
    const stale = signed(notification({ Timestamp: new Date(NOW.getTime() - 2 * 3_600_000).toISOString() }));
    expect(await asyncCodeOf(receive(stale, provider()))).toBe('timestamp_out_of_tolerance');
    // Neither a foreign topic nor a stale message costs a certificate request.
    expect(certificates.requests.length).toBe(before);
    const unsigned = JSON.parse(body) as Record<string, string>;
    delete unsigned.Signature;
    expect(await asyncCodeOf(receive(JSON.stringify(unsigned)))).toBe('missing_signature');
    expect(await asyncCodeOf(receive(signed(notification(), { version: '3' as '2' })))).toBe(
      'invalid_signature',
    );
  });

  itGuardsCertificateFetches({
    certificates,
    hosts: 'sns.<region>.amazonaws.com, or not a .pem,',
    refusedUrls: [
      'https://sns.us-east-1.amazonaws.com.evil.example/cert.pem',
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com:8443/cert.pem',
      'https://s3.amazonaws.com/cert.pem',
      // An S3 bucket named "sns" (accepted before the region's shape was required).
      'https://sns.s3.amazonaws.com/cert.pem',
      'https://127.0.0.1/cert.pem',
      'https://sns.us-east-1.amazonaws.com/cert.txt',
    ],
    freshProvider: () => {
      const source = provider();
      return (url, laterMs) => receive(signed(notification(), { url }), source, laterMs);
    },
  });

  it('takes TopicArns as its secrets, and cannot verify synchronously', () => {
    expect(() => awsSnsProvider({ secrets: ['whsec_not_a_topic'] })).toThrow(TypeError);
    expect(() => sns.verify(request(signed(notification()), {}), NOW)).toThrow(/receiveAsync/);
  });
});
