import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cpuTime } from '@webhook-inbox/testing';
import { maskString } from '../src/redact.ts';

describe('maskString', () => {
  it('masks emails, secrets, cards and phones in free text, and keeps ids, amounts and dates', () => {
    const text =
      'evt_1Ab2 for 4200 EUR on 2026-12-03: call +1 (555) 010-9999 or mail bob@example.com, card ' +
      '4000 0566 5566 5556, key sk_live_51Habc123DEF, hook whsec_abcDEF123+/=, auth Bearer abc.def.ghi';
    const masked = maskString(text);
    for (const secret of ['555', 'bob@', '4000 0566', 'sk_live', 'whsec_abc', 'abc.def.ghi']) {
      expect(masked, secret).not.toContain(secret);
    }
    expect(masked).toContain('evt_1Ab2 for 4200 EUR on 2026-12-03');
    expect(masked).toContain('[phone]');
    expect(masked).toContain('[email]');
    expect(masked).toContain('[card]');
    expect(masked).toContain('[secret]');
  });

  it('a whole value of 9 to 15 digits is a phone number', () => {
    expect(maskString('0612345678')).toBe('[phone]');
    expect(maskString('order 0612345678')).toBe('order 0612345678');
  });

  it('cuts a long text before masking, leaving out the word the cut went through', () => {
    const text = `${'word '.repeat(199)}alice.smith@example.com and more`;
    const masked = maskString(text);
    expect(masked.length).toBeLessThanOrEqual(1001);
    expect(masked).not.toContain('alice');
    expect(masked.endsWith('…')).toBe(true);
  });

  it('property: no email survives, wherever it is put', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.string({ maxLength: 20 }), (email, prefix) => {
        const masked = maskString(`${prefix} ${email} end`);
        const local = email.split('@')[0] ?? '';
        return !masked.includes(email) && !masked.includes(`${local}@`);
      }),
    );
  });

  it('property: Luhn-valid 16-digit card numbers are masked in free text', () => {
    const luhnComplete = (digits: number[]) => {
      const sum = digits
        .slice()
        .reverse()
        .reduce((acc, d, i) => acc + (i % 2 === 0 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d), 0);
      return [...digits, (10 - (sum % 10)) % 10].join('');
    };
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }), (digits) => {
        const card = luhnComplete([4, ...digits.slice(1)]);
        return !maskString(`paid with ${card} today`).includes(card);
      }),
    );
  });
});

// A signed payload can carry keys and values of any length: masking cuts its input before any pattern runs, and
// no pattern backtracks over what it has already scanned (a backtracking email pattern over a 200k-character key
// blocks the event loop for about a minute).
describe('hostile input', () => {
  const MB = 1 << 20;
  const shapes: Record<string, string> = {
    'a run without "@"': 'x'.repeat(MB),
    'digits glued to a letter': `${'1'.repeat(MB)}a`,
    'spaced digits': `${'1 '.repeat(MB / 2)}1a`,
    'many "a@"': 'a@'.repeat(MB / 2),
    'Bearer and spaces': `Bearer${' '.repeat(MB)}`,
  };

  it.each(Object.entries(shapes))(
    'maskString over 1 MB of %s: bounded output, well under a second of CPU',
    (name, text) => {
      const { value: masked, ms } = cpuTime(() => maskString(text));
      expect(masked.length).toBeLessThan(4000);
      expect(ms).toBeLessThan(1000);
      console.info(`maskString, 1 MB of ${name}: ${ms.toFixed(1)} ms`);
    },
  );
});
