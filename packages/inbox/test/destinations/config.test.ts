import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  DestinationsFileError,
  isRestrictedAddress,
  matches,
  parseDestinations,
  parseRetryAfter,
} from '../../src/destinations/index.ts';
import { registrations } from '../../src/destinations/dispatcher.ts';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

function problems(yaml: string): readonly string[] {
  try {
    parseDestinations(yaml, '/etc/inbox/destinations.yaml');
  } catch (error) {
    if (error instanceof DestinationsFileError) return error.problems;
    throw error;
  }
  throw new Error('the file was accepted');
}

describe('the destinations file', () => {
  it('fills the defaults: envelope bodies, the Svix schedule, 15 s, 10 at once, the breaker', () => {
    const [destination] = parseDestinations(
      `destinations:\n  crm:\n    url: https://crm.example.com/hooks\n    events: [{ source: stripe }]\n    secrets: [${SECRET}]\n`,
      'destinations.yaml',
    );
    expect(destination).toMatchObject({
      name: 'crm',
      group: 'default',
      body: 'envelope',
      timeoutMs: 15_000,
      concurrency: 10,
      rateLimit: undefined,
      allowPrivateNetwork: false,
      retrySchedule: DEFAULT_RETRY_SCHEDULE_SECONDS,
      breaker: { failures: 10, probeAfterMs: 60_000 },
      events: [{ source: 'stripe', types: ['*'] }],
    });
    expect(DEFAULT_RETRY_SCHEDULE_SECONDS).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(destination?.secrets[0]).toEqual(Buffer.alloc(32, 7));
  });

  it('reads durations as 5, 5s, 5m, 2h', () => {
    const [destination] = parseDestinations(
      `destinations:\n  a:\n    url: https://a.example.com\n    events: [{}]\n    timeout: 2.5s\n` +
        `    retrySchedule: [0, 5s, 5m, 2h, 30]\n    secrets: [${SECRET}]\n`,
      'd.yaml',
    );
    expect(destination?.retrySchedule).toEqual([0, 5, 300, 7200, 30]);
    expect(destination?.timeoutMs).toBe(2500);
  });

  it('names the destination and the field of each mistake, never a secret', () => {
    const found = problems(`
destinations:
  crm:
    url: ftp://crm.example.com
    events: [{ source: stripe, types: [] }]
    filter: { pointer: data/id, equals: 1 }
    concurrency: 0
    headers: { webhook-id: mine }
    retrySchedule: [soon]
    secrets: [whsec_c2hvcnQ=]
  Bad.Name:
    url: https://x.example.com
    events: [{}]
    secrets: [${SECRET}]
  nosecret:
    url: https://x.example.com
    events: [{}]
`);
    const text = found.join('\n');
    expect(text).toContain('destinations.yaml: destination "crm": url: must be an http or https URL');
    expect(text).toContain('destination "crm": events.0.types:');
    expect(text).toContain('destination "crm": filter');
    expect(text).toContain('destination "crm": concurrency:');
    expect(text).toMatch(/destination "crm": headers: may not set webhook-id/);
    expect(text).toContain('destination "crm": retrySchedule.0: "soon" is not a duration');
    expect(text).toContain('destination "crm": secrets.0: must hold at least 24 bytes');
    expect(text).toMatch(/destination "Bad.Name": name: must be 1-40 characters/);
    expect(text).not.toContain(SECRET);
    // Shape mistakes are reported first; a file without them is then checked for secrets.
    expect(
      problems(`destinations:\n  nosecret:\n    url: https://x.example.com\n    events: [{}]\n`),
    ).toEqual([
      'destinations.yaml: destination "nosecret": secrets: at least one signing secret is required (secrets or secretFiles)',
    ]);
  });

  it('reports a YAML error by position and reason, not by the text of the line', () => {
    const [problem] = problems(`destinations:\n  a: { url: [${SECRET}\n`);
    expect(problem).toMatch(/^destinations\.yaml: is not valid YAML: line \d+, column \d+ \([A-Z_]+\)$/);
    expect(problem).not.toContain(SECRET);
  });
});

describe('matching', () => {
  const destination = {
    events: [
      { source: 'stripe', types: ['invoice.*', 'customer.created'] },
      { source: '*', types: ['*.deleted'] },
    ],
    filter: { pointer: '/data/object/livemode', equals: true },
  };
  const event = (provider: string, type: string, livemode: unknown = true) => ({
    provider,
    type,
    payload: { data: { object: { livemode } } },
  });

  it('selects by source and wildcard type, then by the body filter', () => {
    expect(matches(destination, event('stripe', 'invoice.paid'))).toBe(true);
    expect(matches(destination, event('stripe', 'invoice.payment.failed'))).toBe(true);
    expect(matches(destination, event('stripe', 'customer.created'))).toBe(true);
    expect(matches(destination, event('stripe', 'customer.updated'))).toBe(false);
    expect(matches(destination, event('github', 'repo.deleted'))).toBe(true);
    expect(matches(destination, event('github', 'invoice.paid'))).toBe(false);
    expect(matches(destination, event('stripe', 'invoice.paid', false))).toBe(false);
    expect(matches(destination, { provider: 'stripe', type: 'invoice.paid', payload: {} })).toBe(false);
    expect(
      matches(
        {
          events: [{ source: '*', types: ['*'] }],
          filter: { pointer: '/id', equals: 12345678901234567890n },
        },
        { provider: 'x', type: 'y', payload: { id: 12345678901234567890n } },
      ),
    ).toBe(true);
    expect(
      matches(
        { events: [{ source: '*', types: ['*'] }], filter: { pointer: '/a~1b', exists: false } },
        { provider: 'x', type: 'y', payload: { 'a/b': 1 } },
      ),
    ).toBe(false);
  });

  it('registers exact types where it can, and * where a type has a wildcard', () => {
    expect(Object.fromEntries(registrations(destination))).toEqual({
      stripe: ['*'],
      '*': ['*'],
    });
    expect(
      Object.fromEntries(registrations({ events: [{ source: 'shop', types: ['b.x', 'a.y'] }] })),
    ).toEqual({ shop: ['a.y', 'b.x'] });
  });
});

describe('outbound safety and Retry-After', () => {
  it('refuses private, loopback, link-local and mapped addresses, and allows public ones', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
    ]) {
      expect(isRestrictedAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:1.1.1.1']) {
      expect(isRestrictedAddress(address), address).toBe(false);
    }
  });

  it('reads Retry-After as seconds or as a date', () => {
    const now = Date.parse('2026-12-06T08:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 06 Dec 2026 08:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
