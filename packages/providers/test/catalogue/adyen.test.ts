import { hmacValidator } from '@adyen/api-library';
import { describe, expect, it } from 'vitest';
import { adyenProvider, signAdyen } from '../../src/catalogue/providers/adyen.ts';
import { codeOf, request } from './support.ts';

// Adyen's @adyen/api-library signs and verifies notification items (hmacValidator's calculateHmac and
// validateHMAC): both directions are checked, on the item of Adyen's documentation example.
const KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const NOW = new Date('2026-12-05T00:00:00Z');
const item = (pspReference: string, extra: Record<string, unknown> = {}) => ({
  amount: { currency: 'EUR', value: 1130 },
  eventCode: 'AUTHORISATION',
  eventDate: '2026-12-05T00:00:00+01:00',
  merchantAccountCode: 'YOUR_MERCHANT_ACCOUNT',
  merchantReference: 'YOUR_REFERENCE',
  pspReference,
  success: 'true',
  ...extra,
});
const signedItem = (fields: Record<string, unknown>, key = KEY) => ({
  ...fields,
  additionalData: { hmacSignature: signAdyen({ item: fields, secret: key }) },
});
const body = (...items: unknown[]) =>
  JSON.stringify({
    live: 'false',
    notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })),
  });
const adyen = adyenProvider({ secrets: [KEY] });

describe('adyen', () => {
  it("agrees with @adyen/api-library's hmacValidator both ways", () => {
    const validator = new hmacValidator();
    const fields = item('7914073381342284');
    expect(signAdyen({ item: fields, secret: KEY })).toBe(validator.calculateHmac(fields as never, KEY));
    expect(validator.validateHMAC(signedItem(fields) as never, KEY)).toBe(true);
    const theirs = {
      ...fields,
      additionalData: { hmacSignature: validator.calculateHmac(fields as never, KEY) },
    };
    expect(codeOf(() => adyen.verify(request(body(theirs), {}), NOW))).toBe('no error');
  });

  it('records each item keyed by merchant, pspReference, eventCode and success, answered [accepted]', () => {
    const delivery = body(signedItem(item('A1')), signedItem(item('B2', { success: 'false' })));
    const reception = adyen.receive?.(request(delivery, {}), NOW);
    const events = reception?.kind === 'events' ? reception.events : [];
    expect(events.map((event) => [event.eventId, event.type])).toEqual([
      ['YOUR_MERCHANT_ACCOUNT:A1:AUTHORISATION:true', 'AUTHORISATION'],
      ['YOUR_MERCHANT_ACCOUNT:B2:AUTHORISATION:false', 'AUTHORISATION'],
    ]);
    expect(adyen.response).toEqual({
      status: 200,
      contentType: 'text/plain; charset=utf-8',
      body: '[accepted]',
    });
  });

  it('refuses a changed signed field, a wrong key, a missing hmacSignature, one bad item among good ones', () => {
    const good = signedItem(item('A1'));
    expect(
      codeOf(() => adyen.verify(request(body({ ...good, amount: { currency: 'EUR', value: 1 } }), {}), NOW)),
    ).toBe('invalid_signature');
    expect(codeOf(() => adyen.verify(request(body(signedItem(item('A1'), 'AA'.repeat(32))), {}), NOW))).toBe(
      'invalid_signature',
    );
    expect(codeOf(() => adyen.verify(request(body(item('A1')), {}), NOW))).toBe('missing_signature');
    expect(codeOf(() => adyen.verify(request(body(good, { ...good, pspReference: 'X' }), {}), NOW))).toBe(
      'invalid_signature',
    );
  });

  it('refuses at start-up a key that is not hex', () => {
    expect(() => adyenProvider({ secrets: ['not-hex'] })).toThrow(TypeError);
  });
});
