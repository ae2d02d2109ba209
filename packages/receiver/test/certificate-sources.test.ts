import { EVENTS_QUEUE } from '@webhook-inbox/inbox';
import { catalogueEntry, CERTIFICATE_SOURCE_TYPES } from '@webhook-inbox/providers';
import { catalogueDelivery, type CatalogueDelivery } from '@webhook-inbox/samples';
import { useCertificateServer, useTestDatabase, waitFor, sampleCredentials } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { sql } from './helpers.ts';
import { codeOf, request } from './sources-fixture.ts';
import { post, receiverEnv } from '@webhook-inbox/scenarios/receiver';

// AWS SNS and PayPal end to end: a receiver on a real PostgreSQL, declared by AWS_SNS_WEBHOOK_SECRET and
// PAYPAL_WEBHOOK_SECRET, reached over real HTTP. Their certificates come from a loopback HTTP server through the
// receiver's injectable certificate fetch (the documented https URL is mapped onto it), which counts its requests.

const db = useTestDatabase();
let receiver: Receiver;
/** The sample certificate of every certificate-based type (one key pair serves them all). */
const certificates = useCertificateServer(() => sampleCredentials(catalogueEntry('aws-sns')!).certificate!);

beforeAll(async () => {
  const secretOf = (type: string) => sampleCredentials(catalogueEntry(type)!).secret;
  const env = receiverEnv(db.url, {
    PORT: '0',
    LOG_LEVEL: 'silent',
    AWS_SNS_WEBHOOK_SECRET: secretOf('aws-sns'),
    PAYPAL_WEBHOOK_SECRET: secretOf('paypal'),
  });
  receiver = await startReceiver(parseConfig(env), { certificateFetch: certificates.fetch });
});
afterAll(async () => {
  await receiver?.close();
});

/** What differs between the certificate-based types, for the same cases. */
interface CertificateType {
  /** The event type its sample delivery has. */
  eventType: string;
  /** Text inside what is signed (SNS's Subject: its certificate URL, last in the body, is not; PayPal's body). */
  signedText: string;
  /** The delivery with its certificate URL set to `url` (same signature: the URL is not signed). */
  withCertificateUrl(delivery: CatalogueDelivery, url: string): CatalogueDelivery;
  /** Documented certificate URLs no other test fetches, so the cache does not answer for them. */
  unfetchedUrl: string;
  floodUrl: string;
}

const TYPES: Record<string, CertificateType> = {
  'aws-sns': {
    eventType: 'Notification',
    signedText: 'Order placed',
    withCertificateUrl: (delivery, url) => ({
      ...delivery,
      body: JSON.stringify({ ...(JSON.parse(delivery.body) as object), SigningCertURL: url }),
    }),
    unfetchedUrl: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-down.pem',
    floodUrl: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-flood.pem',
  },
  paypal: {
    eventType: 'PAYMENT.CAPTURE.COMPLETED',
    signedText: 'Payment completed',
    withCertificateUrl: (delivery, url) => ({
      ...delivery,
      headers: { ...delivery.headers, 'paypal-cert-url': url },
    }),
    unfetchedUrl: 'https://api.paypal.com/v1/notifications/certs/CERT-down',
    floodUrl: 'https://api.paypal.com/v1/notifications/certs/CERT-flood',
  },
};

/** The events recorded under `key`, and how many pg-boss jobs point at it. */
async function stored(name: string, key: string) {
  const events = await sql(
    db.url,
    'select event_id, type from webhook_events where provider = $1 and event_id = $2',
    [name, key],
  );
  const jobs = await sql(
    db.url,
    `select count(*)::int as n from pgboss.job where name = $1 and data->>'provider' = $2 and data->>'eventId' = $3`,
    [EVENTS_QUEUE, name, key],
  );
  return { events: events.rows, jobs: (jobs.rows[0] as { n: number }).n };
}

describe.each(CERTIFICATE_SOURCE_TYPES.map((type) => [type]))('%s', (type) => {
  const path = `/webhooks/${type}`;
  const row = TYPES[type];
  if (!row) throw new Error(`no row for the certificate-based type ${type}`);
  const sign = () =>
    catalogueDelivery(type, { ...sampleCredentials(catalogueEntry(type)!), type: row.eventType })!;

  it('records a signed delivery once (a row, a job), answers its redelivery duplicate, fetching the certificate once', async () => {
    const before = certificates.requests.length;
    const delivery = sign();
    const first = await request(receiver.url, path, { body: delivery.body, headers: delivery.headers });
    expect({ status: first.status, body: JSON.parse(first.body) as unknown }).toEqual({
      status: 200,
      body: { status: 'accepted', id: delivery.key },
    });
    const again = await request(receiver.url, path, { body: delivery.body, headers: delivery.headers });
    expect({ status: again.status, body: JSON.parse(again.body) as unknown }).toEqual({
      status: 200,
      body: { status: 'duplicate', id: delivery.key },
    });
    expect(await stored(type, delivery.key!)).toEqual({
      events: [{ event_id: delivery.key, type: delivery.type }],
      jobs: 1,
    });
    const next = sign();
    expect((await request(receiver.url, path, { body: next.body, headers: next.headers })).status).toBe(200);
    // At most one request for the certificate across three deliveries (none if an earlier test fetched it).
    expect(certificates.requests.length - before).toBeLessThanOrEqual(1);
  });

  it('refuses a tampered body with invalid_signature (400), recording nothing', async () => {
    const delivery = sign();
    const tampered = delivery.body.replace(row.signedText, 'Changed');
    expect(tampered).not.toBe(delivery.body);
    const answer = await request(receiver.url, path, { body: tampered, headers: delivery.headers });
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({
      status: 400,
      code: 'invalid_signature',
    });
    expect((await stored(type, delivery.key!)).events).toEqual([]);
  });

  it('refuses a certificate URL off the documented hosts with 400 certificate_url_refused, making no request', async () => {
    const before = certificates.requests.length;
    const delivery = row.withCertificateUrl(sign(), `${certificates.origin}/attacker.pem`);
    const answer = await request(receiver.url, path, { body: delivery.body, headers: delivery.headers });
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({
      status: 400,
      code: 'certificate_url_refused',
    });
    expect(certificates.requests.length).toBe(before);
    expect((await stored(type, delivery.key!)).events).toEqual([]);
  });

  it('answers 503 certificate_unavailable with Retry-After while the certificate host is down, then records the retry', async () => {
    const delivery = row.withCertificateUrl(sign(), row.unfetchedUrl);
    certificates.down = true;
    const refused = await post(receiver.url, { ...delivery, provider: type, key: delivery.key!, path });
    certificates.down = false;
    expect({
      status: refused.status,
      code: (JSON.parse(refused.body) as { error: { code: string } }).error.code,
      retryAfter: refused.headers['retry-after'],
    }).toEqual({ status: 503, code: 'certificate_unavailable', retryAfter: '5' });
    expect((await stored(type, delivery.key!)).events).toEqual([]);
    // The failure is remembered for Retry-After's 5 s: the retries meanwhile are answered 503 without a fetch.
    await waitFor(
      async () =>
        (await request(receiver.url, path, { body: delivery.body, headers: delivery.headers })).status ===
        200,
      { timeout: 60_000, interval: 500 },
    );
    expect((await stored(type, delivery.key!)).jobs).toBe(1);
    const certificatePath = new URL(row.unfetchedUrl).pathname;
    expect(certificates.requests.filter((url) => url === certificatePath)).toEqual([
      certificatePath,
      certificatePath,
    ]);
  });

  it('refused (60 fetches before): 60 requests naming one certificate URL whose host is down make 1 fetch, each answered 503', async () => {
    const delivery = row.withCertificateUrl(sign(), row.floodUrl);
    const floodPath = new URL(row.floodUrl).pathname;
    certificates.down = true;
    const statuses: number[] = [];
    try {
      for (let round = 0; round < 10; round += 1) {
        const answers = await Promise.all(
          Array.from({ length: 6 }, () =>
            request(receiver.url, path, { body: delivery.body, headers: delivery.headers }),
          ),
        );
        statuses.push(...answers.map((answer) => answer.status));
      }
    } finally {
      certificates.down = false;
    }
    expect(statuses).toEqual(Array.from({ length: 60 }, () => 503));
    expect(certificates.requests.filter((url) => url === floodPath)).toEqual([floodPath]);
  });
});
