import { CATALOGUE } from '@webhook-inbox/providers';
import { hasSubject, subjectOf } from '@webhook-inbox/providers/subject';
import { sampleCredentials } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { catalogueDelivery, catalogueSampleType } from '../src/index.ts';
import { request } from './support.ts';

describe('the catalogue samples', () => {
  it('passes on the body it parsed while verifying, where the subject is read from it (types with subject paths)', () => {
    const url = 'https://hooks.example.com/webhooks/x';
    const entries = CATALOGUE.filter((entry) => hasSubject(entry.type));
    expect(entries.length).toBeGreaterThan(15);
    for (const entry of entries) {
      const credentials = sampleCredentials(entry);
      const type = catalogueSampleType(entry.type)!;
      const delivery = catalogueDelivery(entry.type, { ...credentials, type, url })!;
      const provider = entry.create({ secrets: [credentials.secret], url, verifyToken: 'verify-me' });
      const event = provider.verify(request(delivery.body, delivery.headers), new Date());
      const { body, ...unparsed } = event;
      expect(body, entry.type).toEqual(JSON.parse(event.payloadText));
      // The same subject as when the text is parsed again.
      expect(subjectOf(event), entry.type).toEqual(subjectOf(unparsed));
    }
  });
});
