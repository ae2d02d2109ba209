import { describe, expect, it } from 'vitest';
import { cpuTime } from '@webhook-inbox/testing';
import { effectFailed } from '../alert-support.ts';
import { alertFingerprint, normalizeErrorMessage } from '../../src/alerts/model.ts';

describe('alertFingerprint', () => {
  it('strips ids, numbers and emails from the error, and keeps what tells failures apart', () => {
    expect(normalizeErrorMessage('timeout after 5000 ms for evt_1NfJDPojXS6LN (ann@example.com)')).toBe(
      'timeout after <n> ms for <id> (<email>)',
    );
    expect(normalizeErrorMessage('missing field customer_details')).toBe('missing field customer_details');
    expect(alertFingerprint(effectFailed(1))).toBe(alertFingerprint(effectFailed(2)));
    expect(alertFingerprint(effectFailed(1))).not.toBe(
      alertFingerprint(effectFailed(1, { effect: 'other' })),
    );
    expect(alertFingerprint(effectFailed(1))).not.toBe(
      alertFingerprint(effectFailed(1, { error: new Error('connection refused') })),
    );
  });
});

describe('normalizeErrorMessage', () => {
  it('reads a bounded start of a 1 MB message, whatever its shape', () => {
    const MB = 1 << 20;
    for (const message of ['x'.repeat(MB), `${'1'.repeat(MB)}a`, 'ab_'.repeat(MB / 3), 'f'.repeat(MB)]) {
      const { value: normalized, ms } = cpuTime(() => normalizeErrorMessage(message));
      expect(ms).toBeLessThan(1000);
      expect(normalized.length).toBeLessThanOrEqual(500);
    }
  });
});
