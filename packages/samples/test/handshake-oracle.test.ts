import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CATALOGUE,
  createSourceProvider,
  HANDSHAKES,
  isBuiltinSource,
  parseSourcesFile,
  signApiKey,
  signEd25519,
  signHmac,
  type CatalogueEntry,
  type HandshakeType,
  type Provider,
  type Reception,
  type SignedRequest,
  type SourceDefinition,
} from '@webhook-inbox/providers';
import { sampleCredentials } from '@webhook-inbox/testing';
import { catalogueDelivery, catalogueSampleType } from '../src/index.ts';

// No unsigned request may get an answer whose bytes are a signature of a body the same source records: for every
// catalogue type and one template source per handshake type, fast-check sends unsigned GETs and POSTs carrying
// attacker-chosen text where each handshake reads it (crc_token, hub.challenge, validationToken, a challenge or
// plainToken in the body, the body itself), decodes every answer in every encoding a signature header takes (hex,
// base64, base64url, behind any prefix), and compares it with the real signature of each text the attacker chose,
// made by the source's own signer. A match whose signed delivery is recorded is a forgery.

const SECRET = 'oracle-test-secret';
const VERIFY_TOKEN = 'oracle-verify-token';
const ED25519 = generateKeyPairSync('ed25519');
const ED25519_PUBLIC = ED25519.publicKey
  .export({ type: 'spki', format: 'der' })
  .subarray(-32)
  .toString('hex');
const ED25519_PRIVATE = Buffer.from(
  (ED25519.privateKey.export({ format: 'jwk' }) as { d: string }).d,
  'base64url',
).toString('hex');

/** One source under test: its provider, its secret, and a delivery of `body` signed as its sender would. */
interface Source {
  name: string;
  provider: Provider;
  secret: string;
  sign(body: string): Delivery | undefined;
}
interface Delivery {
  body: string;
  headers: Record<string, string>;
  query: string;
}

/** One template source per handshake type, as examples/sources.yaml declares them; a new type fails the test below. */
const TEMPLATE_SOURCES: Record<HandshakeType, string> = {
  slack: `{ type: hmac, secrets: [${SECRET}], eventKey: { pointer: /event_id }, handshake: { type: slack },
    hmac: { header: X-Slack-Signature, prefix: "v0=", signed: "v0:{timestamp}:{body}", timestamp: { header: X-Slack-Request-Timestamp } } }`,
  zoom: `{ type: hmac, secrets: [${SECRET}], eventKey: { pointer: [/event, /event_ts] }, handshake: { type: zoom },
    hmac: { header: x-zm-signature, prefix: "v0=", signed: "v0:{timestamp}:{body}", timestamp: { header: x-zm-request-timestamp } } }`,
  meta: `{ type: hmac, secrets: [${SECRET}], eventKey: { bodyHash: true }, hmac: { header: X-Hub-Signature-256, prefix: "sha256=" },
    handshake: { type: meta, verifyToken: ${VERIFY_TOKEN} } }`,
  discord: `{ type: ed25519, secrets: ["${ED25519_PUBLIC}"], eventKey: { pointer: /id }, handshake: { type: discord } }`,
  graph: `{ type: api-key, secrets: [${SECRET}], apiKey: { query: key }, batch: { items: /value }, handshake: { type: graph },
    eventKey: { pointer: [/subscriptionId, /changeType] } }`,
  crc: `{ type: hmac, secrets: [${SECRET}], eventKey: { bodyHash: true }, handshake: { type: crc },
    hmac: { header: x-twitter-webhooks-signature, encoding: base64, prefix: "sha256=" } }`,
};

/** The catalogue types that answer a handshake; the test below fails when another one does. */
const CATALOGUE_HANDSHAKES = ['discord', 'meta', 'slack', 'zoom'];

function templateSource(type: HandshakeType): Source {
  const [definition] = parseSourcesFile('oracle.yaml', `sources:\n  ${type}: ${TEMPLATE_SOURCES[type]}\n`);
  const source = definition as SourceDefinition;
  if (!isBuiltinSource(source)) throw new TypeError(`${type}: not a template source`);
  const signer = (body: string): Delivery => {
    switch (source.type) {
      case 'hmac':
        return { body, query: '', headers: signHmac({ hmac: source.hmac, secret: SECRET, payload: body }) };
      case 'ed25519':
        return {
          body,
          query: '',
          headers: signEd25519({ ed25519: source.ed25519, privateKey: ED25519_PRIVATE, payload: body }),
        };
      case 'api-key':
        return { body, ...signApiKey(source.apiKey, SECRET) };
      default:
        throw new TypeError(`no signer for ${source.type}`);
    }
  };
  return {
    name: `template ${type}`,
    provider: createSourceProvider(source, 300),
    secret: source.secrets[0] ?? '',
    sign: signer,
  };
}

function catalogueSource(entry: CatalogueEntry): Source {
  const credentials = sampleCredentials(entry);
  const url = `https://hooks.example.com/webhooks/${entry.type}`;
  const provider = entry.create({
    name: entry.type,
    secrets: [credentials.secret],
    url: entry.facts.requiredOptions.includes('url') ? url : undefined,
    verifyToken: entry.facts.requiredOptions.includes('verifyToken') ? VERIFY_TOKEN : undefined,
    // No certificate is ever fetched here: an unsigned request must be refused without one.
    certificateFetch: () => Promise.reject(new Error('no certificate host in this test')),
  });
  const type = catalogueSampleType(entry.type) ?? 'webhook';
  return {
    name: entry.type,
    provider,
    secret: credentials.secret,
    sign(body) {
      try {
        const delivery = catalogueDelivery(entry.type, { ...credentials, type, url, payload: body });
        return delivery && { body: delivery.body, headers: delivery.headers, query: '' };
      } catch {
        return undefined; // a body this provider's signer cannot send (not JSON where it must be)
      }
    },
  };
}

function requestOf(
  method: string,
  body: string,
  headers: Record<string, string>,
  query: string,
): SignedRequest {
  const h = new Headers(headers);
  return { rawBody: Buffer.from(body), header: (name) => h.get(name), method, url: `/webhooks/x${query}` };
}

/** What the source does with a request: a reception, or the message its refusal answers with. */
async function receive(provider: Provider, request: SignedRequest): Promise<Reception | string> {
  try {
    if (provider.receiveAsync) return await provider.receiveAsync(request, new Date());
    if (provider.receive) return provider.receive(request, new Date());
    return { kind: 'events', events: [provider.verify(request, new Date())] };
  } catch (error) {
    return (error as Error).message;
  }
}

/** Every byte string a text can be read as by a signature header: itself, and each long token decoded. */
function byteForms(text: string): Buffer[] {
  const forms = [Buffer.from(text)];
  for (const [token] of text.matchAll(/[A-Za-z0-9+/_-]{16,}={0,2}/g)) {
    if (/^(?:[0-9a-fA-F]{2})+$/.test(token)) forms.push(Buffer.from(token, 'hex'));
    forms.push(Buffer.from(token, 'base64'), Buffer.from(token, 'base64url'));
  }
  return forms.filter((form) => form.length >= 16);
}

const QUERY_PLACES = ['crc_token', 'hub.challenge', 'validationToken'] as const;
const PLACES = [...QUERY_PLACES, 'challenge', 'plainToken', 'body'] as const;

/** An unsigned request: attacker-chosen text where a handshake reads it, the verify token or not, no signature. */
const unsignedRequest = fc.record({
  method: fc.constantFrom('GET', 'POST'),
  chosen: fc.oneof(
    fc.json({ maxDepth: 2 }),
    fc.stringMatching(/^[A-Za-z0-9+/_=-]{8,64}$/),
    fc.string({ maxLength: 64 }),
    fc.constantFrom('{}', '[]', '123', 'true', '{"type":1}', '{"id":"1","type":2}', '[{"sg_event_id":"e"}]'),
  ),
  place: fc.constantFrom(...PLACES),
  knowsVerifyToken: fc.boolean(),
  bogusSignature: fc.option(fc.stringMatching(/^[A-Za-z0-9+/=]{1,90}$/), { nil: undefined }),
});
type Unsigned = typeof unsignedRequest extends fc.Arbitrary<infer T> ? T : never;

function build(source: Source, r: Unsigned): { request: SignedRequest; texts: string[] } {
  const query = new URLSearchParams({
    'hub.mode': 'subscribe',
    'hub.verify_token': r.knowsVerifyToken ? VERIFY_TOKEN : 'a-guess',
  });
  if ((QUERY_PLACES as readonly string[]).includes(r.place)) query.set(r.place, r.chosen);
  const ts = Math.floor(Date.now() / 1000);
  const body =
    r.method === 'GET'
      ? ''
      : r.place === 'challenge'
        ? JSON.stringify({ type: 'url_verification', token: 't', challenge: r.chosen })
        : r.place === 'plainToken'
          ? JSON.stringify({
              event: 'endpoint.url_validation',
              event_ts: ts,
              payload: { plainToken: r.chosen },
            })
          : r.place === 'body'
            ? r.chosen
            : '{}';
  // The source's own header names, each holding a made-up value (a timestamp stays a current one).
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (r.bogusSignature !== undefined) {
    for (const name of Object.keys(source.sign('{}')?.headers ?? {})) {
      headers[name] = /timestamp|time$/i.test(name) ? String(ts) : r.bogusSignature;
    }
  }
  const texts = [r.chosen, body, ...query.values()].filter((text) => text !== '');
  return { request: requestOf(r.method, body, headers, `?${query.toString()}`), texts };
}

/** A forgery the answer to `r` makes possible, or `undefined`. */
async function forgeryFrom(source: Source, r: Unsigned): Promise<string | undefined> {
  const { request, texts } = build(source, r);
  const reception = await receive(source.provider, request);
  if (typeof reception !== 'string' && reception.kind === 'events' && reception.events.length > 0) {
    return `an unsigned ${r.method} was recorded`;
  }
  const answer =
    typeof reception === 'string' ? reception : reception.kind === 'handshake' ? reception.answer.body : '';
  if (answer.includes(source.secret)) return 'the answer holds the secret';
  const leaked = byteForms(answer);
  for (const text of new Set(texts)) {
    const delivery = source.sign(text);
    if (delivery === undefined) continue;
    const signature = Object.values(delivery.headers).flatMap(byteForms);
    if (!signature.some((bytes) => leaked.some((leak) => leak.equals(bytes)))) continue;
    const forged = await receive(
      source.provider,
      requestOf('POST', delivery.body, delivery.headers, delivery.query),
    );
    if (typeof forged !== 'string' && forged.kind === 'events' && forged.events.length > 0) {
      return `the answer is the signature of ${JSON.stringify(text)}, which is recorded`;
    }
  }
  return undefined;
}

const SOURCES: Source[] = [...HANDSHAKES.map(templateSource), ...CATALOGUE.map(catalogueSource)];

describe('no unsigned request gets a signature of a recordable body', () => {
  it('covers every template handshake type, and every catalogue type that answers a handshake', async () => {
    expect(Object.keys(TEMPLATE_SOURCES).sort()).toEqual([...HANDSHAKES].sort());
    // Every catalogue type, sent each handshake the receiver knows, signed: those that answer one are listed.
    const answering: string[] = [];
    const ts = Math.floor(Date.now() / 1000);
    const shapes = [
      JSON.stringify({ type: 'url_verification', token: 't', challenge: 'c'.repeat(20) }),
      JSON.stringify({
        event: 'endpoint.url_validation',
        event_ts: ts,
        payload: { plainToken: 'p'.repeat(22) },
      }),
      JSON.stringify({ id: '1', application_id: '2', type: 1, version: 1 }),
    ];
    for (const source of SOURCES.filter(({ name }) => !name.startsWith('template '))) {
      const get = `?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=c&crc_token=${'t'.repeat(20)}`;
      const probes = [
        requestOf('GET', '', {}, get),
        ...shapes.flatMap((shape) => {
          const delivery = source.sign(shape);
          return delivery ? [requestOf('POST', delivery.body, delivery.headers, delivery.query)] : [];
        }),
      ];
      for (const probe of probes) {
        const reception = await receive(source.provider, probe);
        if (typeof reception !== 'string' && reception.kind === 'handshake') answering.push(source.name);
      }
    }
    expect([...new Set(answering)].sort()).toEqual(CATALOGUE_HANDSHAKES);
  });

  it.each(SOURCES.map((source) => [source.name, source] as const))(
    '%s: no forgery from any unsigned GET or POST (X CRC forged a JSON body before)',
    async (_name, source) => {
      await fc.assert(
        fc.asyncProperty(unsignedRequest, async (r) => {
          expect(await forgeryFrom(source, r)).toBeUndefined();
        }),
        { numRuns: 60 },
      );
    },
  );
});
