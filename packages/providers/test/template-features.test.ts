import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhookError } from '../src/errors.ts';
import { createSourceProvider, sourcesFileSpec } from '../src/sources.ts';
import type { SignedRequest, VerifiedEvent } from '../src/types.ts';

// The template options the catalogue's body-HMAC providers are written with (docs/sources.md), as a user writes
// them: several key headers, an unsigned key header by choice, a required type with a suffix, kept headers, and
// canonical base64 padding.

const SECRET = 'template-secret';
const NOW = new Date();

/** The source's parse result: a provider, or the sources file's messages. */
function source(fields: Record<string, unknown>) {
  const result = sourcesFileSpec.safeParse({
    sources: { t: { type: 'hmac', secrets: [SECRET], ...fields } },
  });
  if (!result.success)
    return { issues: result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) };
  return { provider: createSourceProvider({ ...result.data.sources.t!, name: 't' }, 300) };
}

const HMAC = { header: 'X-Sig', encoding: 'base64' };
const signature = (body: string) => createHmac('sha256', SECRET).update(body).digest('base64');

function deliver(
  provider: ReturnType<typeof source>['provider'],
  body: string,
  headers: Record<string, string>,
  sig = signature(body),
): VerifiedEvent | string {
  const h = new Headers({ ...headers, 'X-Sig': sig });
  const request: SignedRequest = {
    rawBody: Buffer.from(body),
    header: (name) => h.get(name),
    method: 'POST',
  };
  try {
    return provider!.verify(request, NOW);
  } catch (error) {
    if (error instanceof WebhookError) return error.code;
    throw error;
  }
}

describe('template key and type options', () => {
  it('refuses a key header the signature does not cover, unless unsigned: true says it is chosen', () => {
    expect(source({ hmac: HMAC, eventKey: { header: 'X-Delivery' } }).issues).toEqual([
      expect.stringMatching(
        /^sources\.t\.eventKey\.header: X-Delivery is not covered by the signature.*unsigned: true$/,
      ),
    ]);
    expect(source({ hmac: HMAC, eventKey: { pointer: '/id', unsigned: true } }).issues).toEqual([
      'sources.t.eventKey.unsigned: unsigned: true is for a header key only',
    ]);
    const { provider } = source({ hmac: HMAC, eventKey: { header: 'X-Delivery', unsigned: true } });
    expect(deliver(provider, '{}', { 'X-Delivery': 'd-1' })).toMatchObject({
      eventId: 'd-1',
      headers: { 'x-delivery': 'd-1' },
    });
  });

  it('joins several key headers with ":", and refuses a delivery without one of them', () => {
    const { provider } = source({
      hmac: HMAC,
      eventKey: { header: ['X-Store', 'X-Delivery'], unsigned: true },
    });
    expect(deliver(provider, '{}', { 'X-Store': 'https://s.example/', 'X-Delivery': '9' })).toMatchObject({
      eventId: 'https://s.example/:9',
    });
    expect(deliver(provider, '{}', { 'X-Store': 'https://s.example/' })).toBe('invalid_payload');
  });

  it('types by a header plus the suffix the body holds; required refuses a delivery without the type', () => {
    const typed = (eventType: Record<string, unknown>) =>
      source({ hmac: HMAC, eventKey: { pointer: '/id' }, eventType }).provider;
    const suffixed = typed({ header: 'X-Event', suffix: '/action' });
    expect(deliver(suffixed, '{"id":"1","action":"opened"}', { 'X-Event': 'pull_request' })).toMatchObject({
      type: 'pull_request.opened',
    });
    expect(deliver(suffixed, '{"id":"1","action":7}', { 'X-Event': 'push' })).toMatchObject({ type: 'push' });
    expect(deliver(suffixed, '{"id":"1"}', {})).toMatchObject({ type: 'unknown' });
    expect(deliver(typed({ header: 'X-Event', required: true }), '{"id":"1"}', {})).toBe('invalid_payload');
    expect(deliver(typed({ pointer: '/topic', required: true }), '{"id":"1"}', {})).toBe('invalid_payload');
    expect(deliver(typed({ pointer: '/topic', required: true }), '{"id":"1","topic":3}', {})).toMatchObject({
      type: '3',
    });
  });

  it('keeps exactly keepHeaders, else the headers the key and type are read from', () => {
    const headers = { 'X-Event': 'push', 'X-Hook': 'h-1', 'X-Other': 'o' };
    const kept = source({
      hmac: HMAC,
      eventKey: { pointer: '/id' },
      eventType: { header: 'X-Event' },
      keepHeaders: ['X-Hook', 'X-Missing'],
    }).provider;
    expect(deliver(kept, '{"id":"1"}', headers)).toMatchObject({ headers: { 'x-hook': 'h-1' } });
    const defaults = source({ hmac: HMAC, eventKey: { pointer: '/id' }, eventType: { header: 'X-Event' } });
    expect(deliver(defaults.provider, '{"id":"1"}', headers)).toMatchObject({
      headers: { 'x-event': 'push' },
    });
  });

  it('reads a key past 2^53 digit for digit, and carries the body it parsed', () => {
    const { provider } = source({ hmac: HMAC, eventKey: { pointer: '/id' } });
    const body = '{"id":90071992547409931234,"n":1.50}';
    expect(deliver(provider, body, {})).toEqual({
      provider: 't',
      eventId: '90071992547409931234',
      type: 'webhook',
      payloadText: body,
      headers: {},
      body: JSON.parse(body) as unknown,
    });
  });
});

describe('hmac.padding', () => {
  const body = '{"id":"1"}';
  const unpadded = signature(body).replace(/=+$/, '');

  it('optional (the default) accepts a base64 signature with or without its "="; canonical only with it', () => {
    const optional = source({ hmac: HMAC, eventKey: { pointer: '/id' } }).provider;
    const canonical = source({
      hmac: { ...HMAC, padding: 'canonical' },
      eventKey: { pointer: '/id' },
    }).provider;
    expect(deliver(optional, body, {}, unpadded)).toMatchObject({ eventId: '1' });
    expect(deliver(canonical, body, {}, unpadded)).toBe('invalid_signature');
    expect(deliver(canonical, body, {})).toMatchObject({ eventId: '1' });
  });
});
