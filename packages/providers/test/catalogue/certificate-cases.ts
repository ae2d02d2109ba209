import type { CertificateServer } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';

/** The error code an async verification fails with (a WebhookError's or a CertificateError's), or `'no error'`. */
export async function asyncCodeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'no error';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    throw error;
  }
}

/** A certificate-signed provider (aws-sns, paypal) as the shared certificate cases see it. */
export interface CertificateCase {
  /** Its loopback certificate host (`useCertificateServer`), which its providers fetch from. */
  certificates: CertificateServer;
  /** The documented hosts, as the test's name says them. */
  hosts: string;
  /** Certificate URLs off those hosts (or otherwise refused), each refused before any request. */
  refusedUrls: readonly string[];
  /**
   * A new provider (its own empty certificate cache), as a function that receives a fresh signed delivery whose
   * certificate URL is `url` (the documented one when undefined), `laterMs` after the signed time.
   */
  freshProvider: () => (url?: string, laterMs?: number) => Promise<unknown>;
}

/** The certificate URL's allow-list, the single fetch per certificate, and the retry after its host was down. */
export function itGuardsCertificateFetches(c: CertificateCase): void {
  it(`refuses a certificate URL off ${c.hosts} without any request`, async () => {
    const before = c.certificates.requests.length;
    for (const url of c.refusedUrls) {
      expect(await asyncCodeOf(c.freshProvider()(url)), url).toBe('certificate_url_refused');
    }
    expect(c.certificates.requests.length).toBe(before);
  });

  it('fetches a certificate once (a second delivery makes no request); one whose host was down is refused unfetched for 5 s, then fetched again', async () => {
    const receive = c.freshProvider();
    const before = c.certificates.requests.length;
    c.certificates.down = true;
    expect(await asyncCodeOf(receive())).toBe('certificate_unavailable');
    c.certificates.down = false;
    expect(await asyncCodeOf(receive(undefined, 4_000))).toBe('certificate_unavailable');
    expect(c.certificates.requests.length).toBe(before + 1);
    expect(await asyncCodeOf(receive(undefined, 5_000))).toBe('no error');
    expect(await asyncCodeOf(receive())).toBe('no error');
    expect(c.certificates.requests.length).toBe(before + 2);
  });
}
