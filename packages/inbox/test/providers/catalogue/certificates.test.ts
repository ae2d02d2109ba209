import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CertificateError,
  createCertificateStore,
  hostAllowed,
  PAYPAL_CERTIFICATE_HOSTS,
  SNS_CERTIFICATE_HOSTS,
  type CertificateFetch,
} from '../../../src/providers/catalogue/certificates.ts';
import { selfSignedCertificate } from '../../../src/providers/deliveries/index.ts';

// The certificate store against a real loopback HTTP server holding a self-signed certificate made by openssl for
// this test: the injectable fetch maps the documented https URL onto the server, which counts the requests it gets.
const PEM = selfSignedCertificate('sns.amazonaws.com').certificate;
/** A certificate of a 1024-bit RSA key: a modulus that short could be factored. */
const WEAK_PEM = selfSignedCertificate('weak', [], 1024).certificate;
const NOW = new Date();
let server: Server;
let origin = '';
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === '/hang.pem') return; // never answered: the store's deadline must end it
    if (request.url === '/big.pem') return response.end('x'.repeat(64 * 1024));
    if (request.url === '/missing.pem') return response.writeHead(404).end();
    if (request.url === '/weak.pem') return response.end(WEAK_PEM);
    response.end(PEM);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const loopback: CertificateFetch = (url, init) => fetch(`${origin}${new URL(url).pathname}`, init);
const sns = () =>
  createCertificateStore({ allowedHosts: SNS_CERTIFICATE_HOSTS, fetch: loopback, timeoutMs: 200 });
const codeOf = async (promise: Promise<unknown>) =>
  promise.then(
    () => 'no error',
    (error: unknown) => (error instanceof CertificateError ? error.code : 'other'),
  );

describe('certificate store', () => {
  it('allows only https on the documented hosts, default port, no credentials', () => {
    for (const host of [
      'sns.eu-west-1.amazonaws.com',
      'sns.us-gov-west-1.amazonaws.com',
      'sns.us-isob-east-1.amazonaws.com',
      'sns.ap-southeast-2.amazonaws.com',
      'sns.cn-north-1.amazonaws.com.cn',
    ]) {
      const url = `https://${host}/SimpleNotificationService-abc.pem`;
      expect(hostAllowed(url, SNS_CERTIFICATE_HOSTS), url).toBe(true);
    }
    for (const url of [
      'http://sns.eu-west-1.amazonaws.com/a.pem',
      'https://sns.eu-west-1.amazonaws.com:8443/a.pem',
      'https://user:pw@sns.eu-west-1.amazonaws.com/a.pem',
      'https://sns.eu-west-1.amazonaws.com.evil.example/a.pem',
      'https://evil.example/sns.eu-west-1.amazonaws.com/a.pem',
      'https://s3.amazonaws.com/a.pem',
      // Refused: AWS hosts whose first label is not a region; sns.s3 is an S3 bucket named "sns" (were accepted before).
      'https://sns.s3.amazonaws.com/a.pem',
      'https://sns.s3-website-us-east-1.amazonaws.com/a.pem',
      'https://sns.execute-api.amazonaws.com/a.pem',
      'https://sns.elb.amazonaws.com/a.pem',
      'https://sns.eu-west-1.amazonaws.com.cn/a.pem',
      'https://sns.cn-north-1.amazonaws.com/a.pem',
      'https://sns.eu-west.amazonaws.com/a.pem',
      'https://sns.a.b.amazonaws.com/a.pem',
      'https://169.254.169.254/latest/meta-data',
      'not a url',
    ]) {
      expect(hostAllowed(url, SNS_CERTIFICATE_HOSTS), url).toBe(false);
    }
    expect(
      hostAllowed('https://api.sandbox.paypal.com/v1/notifications/certs/CERT-1', PAYPAL_CERTIFICATE_HOSTS),
    ).toBe(true);
    expect(hostAllowed('https://api.paypal.com.evil.example/c', PAYPAL_CERTIFICATE_HOSTS)).toBe(false);
  });

  it('refuses a URL off the allow-list before making any request', async () => {
    const before = requests.length;
    expect(await codeOf(sns().get('https://169.254.169.254/latest/meta-data', NOW))).toBe(
      'certificate_url_refused',
    );
    expect(await codeOf(sns().get(`${origin}/cert.pem`, NOW))).toBe('certificate_url_refused');
    expect(requests.length).toBe(before);
  });

  it('fetches a certificate once per URL and serves it from the cache after', async () => {
    const store = sns();
    const before = requests.filter((url) => url === '/cert.pem').length;
    const url = 'https://sns.us-east-1.amazonaws.com/cert.pem';
    const [first, second] = await Promise.all([store.get(url, NOW), store.get(url, NOW)]);
    expect((await store.get(url, NOW)).fingerprint256).toBe(first.fingerprint256);
    expect(second.subject).toContain('CN=sns.amazonaws.com');
    expect(requests.filter((path) => path === '/cert.pem').length - before).toBe(1);
  });

  it('answers certificate_unavailable (retryable) on a deadline or an error status, and does not cache it', async () => {
    const store = sns();
    const hang = store.get('https://sns.us-east-1.amazonaws.com/hang.pem', NOW);
    expect(await codeOf(hang)).toBe('certificate_unavailable');
    expect(await codeOf(store.get('https://sns.us-east-1.amazonaws.com/missing.pem', NOW))).toBe(
      'certificate_unavailable',
    );
    const before = requests.length;
    await codeOf(store.get('https://sns.us-east-1.amazonaws.com/missing.pem', NOW));
    expect(requests.length).toBe(before + 1);
    const error = await store
      .get('https://sns.us-east-1.amazonaws.com/missing.pem', NOW)
      .catch((caught: unknown) => caught);
    expect(error instanceof CertificateError && error.retryable).toBe(true);
  });

  it('refuses a body over the size limit, a certificate outside its validity or of a short RSA key, as certificate_invalid', async () => {
    expect(await codeOf(sns().get('https://sns.us-east-1.amazonaws.com/big.pem', NOW))).toBe(
      'certificate_invalid',
    );
    // Refused: a certificate whose RSA key is under 2048 bits (was used before).
    expect(await codeOf(sns().get('https://sns.us-east-1.amazonaws.com/weak.pem', NOW))).toBe(
      'certificate_invalid',
    );
    const later = new Date(NOW.getTime() + 5 * 86_400_000);
    expect(await codeOf(sns().get('https://sns.us-east-1.amazonaws.com/cert.pem', later))).toBe(
      'certificate_invalid',
    );
  });
});
