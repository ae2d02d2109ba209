import { describe, expect, it } from 'vitest';
import { parseDuration, parseSince, sinceDuration } from '../src/duration.ts';

describe('parseDuration', () => {
  it.each([
    ['90m', 90 * 60_000],
    ['24h', 86_400_000],
    ['3d', 3 * 86_400_000],
    ['1w', 7 * 86_400_000],
    ['1d12h', 36 * 3_600_000],
    ['30s', 30_000],
    ['1.5h', 5_400_000],
    [' 2D ', 2 * 86_400_000],
  ])('%s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '3', 'd', '3 days', '-1h', '0m', '1h-', 'abc'])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(RangeError);
  });

  it.each(['99999999999999999999w', `${'9'.repeat(400)}ms`, '14285715w'])(
    'refuses %j, longer than any Date can span',
    (text) => {
      expect(() => parseDuration(text)).toThrow(/longer than any date can reach/);
    },
  );
});

describe('sinceDuration', () => {
  const now = new Date('2025-01-10T00:00:00Z');

  it('counts back from now', () => {
    expect(sinceDuration('3d', now).toISOString()).toBe('2025-01-07T00:00:00.000Z');
  });

  it('refuses a duration that reaches back before 1970 (no event is that old)', () => {
    expect(sinceDuration('2800w', now).toISOString()).toBe('1971-05-14T00:00:00.000Z');
    expect(() => sinceDuration('9999999w', now)).toThrow(/before 1970-01-01/);
  });
});

describe('parseSince', () => {
  const now = new Date('2025-01-10T00:00:00Z');

  it('takes an ISO date or time as is, and a duration back from now', () => {
    expect(parseSince('2024-12-31', now).toISOString()).toBe('2024-12-31T00:00:00.000Z');
    expect(parseSince('2024-12-31T08:30:00+01:00', now).toISOString()).toBe('2024-12-31T07:30:00.000Z');
    expect(parseSince('24h', now).toISOString()).toBe('2025-01-09T00:00:00.000Z');
  });

  it.each(['2024-13-45', '2024-01-01garbage', '1969-12-31', 'yesterday', '99999999999999999999w'])(
    'refuses %j',
    (text) => {
      expect(() => parseSince(text, now)).toThrow(RangeError);
    },
  );
});
