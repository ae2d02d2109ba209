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
} from '../../src/catalogue/certificates.ts';
import { selfSignedCertificate } from '@webhook-inbox/testing';

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
    if (request.url?.startsWith('/hang')) return; // never answered: the store's deadline must end it
    if (request.url === '/big.pem') return response.end('x'.repeat(64 * 1024));
    if (request.url?.startsWith('/missing')) return response.writeHead(404).end();
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

  it('answers certificate_unavailable (retryable) on a deadline or an error status, and remembers it for failureTtlMs', async () => {
    const store = sns();
    const hang = store.get('https://sns.us-east-1.amazonaws.com/hang.pem', NOW);
    expect(await codeOf(hang)).toBe('certificate_unavailable');
    expect(await codeOf(store.get('https://sns.us-east-1.amazonaws.com/missing.pem', NOW))).toBe(
      'certificate_unavailable',
    );
    const before = requests.length;
    const error = await store
      .get('https://sns.us-east-1.amazonaws.com/missing.pem', NOW)
      .catch((caught: unknown) => caught);
    expect(error instanceof CertificateError && error.retryable).toBe(true);
    expect(requests.length).toBe(before);
    await codeOf(
      store.get('https://sns.us-east-1.amazonaws.com/missing.pem', new Date(NOW.getTime() + 5_000)),
    );
    expect(requests.length).toBe(before + 1);
  });

  it('refused (60 fetches before): 60 requests naming one failing URL, one after the other, make 1 fetch; 60 at once naming one good URL make 1', async () => {
    const store = sns();
    const count = (path: string) => requests.filter((url) => url === path).length;
    for (let i = 0; i < 60; i += 1) {
      const at = new Date(NOW.getTime() + i * 50); // 3 s of requests, inside the failure's 5 s
      expect(await codeOf(store.get('https://sns.us-east-1.amazonaws.com/missing-flood.pem', at))).toBe(
        'certificate_unavailable',
      );
    }
    expect(count('/missing-flood.pem')).toBe(1);
    const url = 'https://sns.us-east-1.amazonaws.com/flood.pem';
    const codes = await Promise.all(Array.from({ length: 60 }, () => codeOf(store.get(url, NOW))));
    expect(new Set(codes)).toEqual(new Set(['no error']));
    expect(count('/flood.pem')).toBe(1);
  });

  it('refused (one fetch each before): a flood of distinct URLs is fetched 4 at a time, the rest answered certificate_unavailable unfetched', async () => {
    const store = sns();
    const before = requests.filter((url) => url.startsWith('/hang-')).length;
    const urls = Array.from({ length: 60 }, (_, i) => `https://sns.us-east-1.amazonaws.com/hang-${i}.pem`);
    const codes = await Promise.all(urls.map((url) => codeOf(store.get(url, NOW))));
    expect(new Set(codes)).toEqual(new Set(['certificate_unavailable']));
    expect(requests.filter((url) => url.startsWith('/hang-')).length - before).toBe(4);
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
