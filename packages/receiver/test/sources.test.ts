import { createHash, randomUUID } from 'node:crypto';
import {
  signBasicAuth,
  signEd25519,
  signHmac,
  signStripe,
  type Ed25519Spec,
  type HmacSpec,
} from '@webhook-inbox/providers';
import { describe, expect, it } from 'vitest';
import { sql } from './helpers.ts';
import {
  codeOf,
  DISCORD_PRIVATE_KEY,
  request,
  SECRETS,
  useSourcesReceiver,
  STRIPE_EU_SECRET,
} from './sources-fixture.ts';
import { STRIPE_SECRET } from '@webhook-inbox/scenarios/receiver';

// Each template source of a sources file, over real HTTP against a receiver on a real PostgreSQL: accepted once and
// then a duplicate, a tampered body, a wrong secret, a stale timestamp, a missing header, and a rotated-in secret.

const sources = useSourcesReceiver();

const hmac = (spec: Partial<HmacSpec> & { header: string }): HmacSpec => ({
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: '',
  signed: '{body}',
  ...spec,
});
const GITHUB = hmac({ header: 'X-Hub-Signature-256', prefix: 'sha256=' });
const SLACK = hmac({
  header: 'X-Slack-Signature',
  prefix: 'v0=',
  signed: 'v0:{timestamp}:{body}',
  timestamp: { header: 'X-Slack-Request-Timestamp' },
});
const ACME = hmac({
  header: 'Acme-Signature',
  algorithm: 'sha512',
  encoding: 'base64url',
  prefix: 'v1,',
  separator: ' ',
  signed: '{id}.{timestamp}.{body}',
  id: { header: 'Acme-Id' },
  timestamp: { header: 'Acme-Timestamp' },
});
const DISCORD: Ed25519Spec = {
  signatureHeader: 'X-Signature-Ed25519',
  timestampHeader: 'X-Signature-Timestamp',
};

interface Signing {
  secret: string;
  /** Unix seconds; default now. */
  timestamp?: number;
}

interface TemplateCase {
  path: string;
  secrets: readonly string[];
  /** A new event's body and its expected key. */
  event(): { body: string; key: string; id: string };
  /** The headers for `body`, signed (or authenticated) with `signing`, for the event `id`. */
  headers(body: string, id: string, signing: Signing): Record<string, string>;
  /** The header whose absence is `missing_signature`. */
  credentialHeader: string;
  /** Whether the signature covers the body (Basic Auth and API keys authenticate the sender only). */
  signsBody: boolean;
  /** Whether a stale timestamp is refused (a signed timestamp). */
  timestamped: boolean;
}

const now = () => Math.floor(Date.now() / 1000);

const cases: Record<string, TemplateCase> = {
  'hmac (GitHub: sha256 hex, sha256= prefix, raw body)': {
    path: '/webhooks/github',
    secrets: SECRETS.github,
    // GitHub signs only the body: its X-GitHub-Delivery is unsigned, so the key is the body's hash.
    event: () => {
      const id = randomUUID();
      const body = `{"action":"opened","number":9007199254740993,"id":"${id}"}`;
      return { id, key: `sha256:${createHash('sha256').update(body).digest('hex')}`, body };
    },
    headers: (body, id, { secret }) => ({
      'content-type': 'application/json',
      'X-GitHub-Delivery': id,
      'X-GitHub-Event': 'pull_request',
      ...signHmac({ hmac: GITHUB, secret, payload: body }),
    }),
    credentialHeader: 'X-Hub-Signature-256',
    signsBody: true,
    timestamped: false,
  },
  'hmac (Slack: v0:{timestamp}:{body})': {
    path: '/webhooks/slack',
    secrets: SECRETS.slack,
    event: () => {
      const id = `Ev${randomUUID().slice(0, 8)}`;
      return { id, key: id, body: JSON.stringify({ event_id: id, event: { type: 'app_mention' } }) };
    },
    headers: (body, _id, { secret, timestamp }) => ({
      'content-type': 'application/json',
      ...signHmac({ hmac: SLACK, secret, payload: body, timestamp }),
    }),
    credentialHeader: 'X-Slack-Signature',
    signsBody: true,
    timestamped: true,
  },
  'hmac ({id}.{timestamp}.{body}, sha512 base64url, several signatures)': {
    path: '/webhooks/billing',
    secrets: SECRETS.billing,
    event: () => {
      const id = `msg_${randomUUID()}`;
      return { id, key: id, body: JSON.stringify({ type: 'invoice.paid' }) };
    },
    headers: (body, id, { secret, timestamp }) => {
      const signed = signHmac({ hmac: ACME, secret, payload: body, timestamp, id });
      // A signature of another key first: any one of them may match.
      const other = signHmac({ hmac: ACME, secret: 'not-ours', payload: body, timestamp, id });
      return { ...signed, 'Acme-Signature': `${other['Acme-Signature']} ${signed['Acme-Signature']}` };
    },
    credentialHeader: 'Acme-Signature',
    signsBody: true,
    timestamped: true,
  },
  'basic-auth': {
    path: '/webhooks/basic',
    secrets: SECRETS.basic,
    event: () => {
      const id = randomUUID();
      return { id, key: id, body: JSON.stringify({ id, type: 'form.submitted' }) };
    },
    headers: (_body, _id, { secret }) => ({ 'content-type': 'application/json', ...signBasicAuth(secret) }),
    credentialHeader: 'authorization',
    signsBody: false,
    timestamped: false,
  },
  'api-key (header with a Bearer prefix; key from two pointers)': {
    path: '/webhooks/apikey',
    secrets: SECRETS.apikey,
    event: () => {
      const id = randomUUID();
      return { id, key: `acct_1:${id}`, body: JSON.stringify({ account: 'acct_1', id }) };
    },
    headers: (_body, _id, { secret }) => ({
      'content-type': 'application/json',
      authorization: `Bearer ${secret}`,
    }),
    credentialHeader: 'authorization',
    signsBody: false,
    timestamped: false,
  },
  'ed25519 (Discord interactions)': {
    path: '/webhooks/discord',
    // One public key is configured: "rotation" is its private key alone.
    secrets: [DISCORD_PRIVATE_KEY],
    event: () => {
      const id = String(BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000)));
      return { id, key: id, body: `{"id":${id},"type":2,"data":{"name":"ping"}}` };
    },
    headers: (body, _id, { secret, timestamp }) => ({
      'content-type': 'application/json',
      ...signEd25519({ ed25519: DISCORD, privateKey: secret, payload: body, timestamp }),
    }),
    credentialHeader: 'X-Signature-Ed25519',
    signsBody: true,
    timestamped: true,
  },
};

async function rows(path: string, key: string): Promise<number> {
  const provider = path.split('/')[2];
  const result = await sql(
    sources.db.url,
    'select count(*)::int as n from webhook_events where provider = $1 and event_id = $2',
    [provider, key],
  );
  return (result.rows[0] as { n: number }).n;
}

describe.each(Object.entries(cases))('template %s', (_name, t) => {
  const [current, previous] = t.secrets as [string, string | undefined];

  it('accepts a new event once (one row under the source name), then answers duplicate', async () => {
    const { body, key, id } = t.event();
    const headers = t.headers(body, id, { secret: current });
    const first = await request(sources.receiver.url, t.path, { body, headers });
    expect({ status: first.status, body: JSON.parse(first.body) as unknown }).toEqual({
      status: 200,
      body: { status: 'accepted', id: key },
    });
    const again = await request(sources.receiver.url, t.path, { body, headers });
    expect(JSON.parse(again.body)).toEqual({ status: 'duplicate', id: key });
    expect(await rows(t.path, key)).toBe(1);
  });

  // A case per property the template has: a template without one has nothing to test there, not a skipped test.
  if (previous !== undefined)
    it('accepts the other configured secret (rotation)', async () => {
      const { body, key, id } = t.event();
      const answer = await request(sources.receiver.url, t.path, {
        body,
        headers: t.headers(body, id, { secret: previous }),
      });
      expect(answer.status).toBe(200);
      expect(await rows(t.path, key)).toBe(1);
    });

  if (t.signsBody)
    it('refuses a tampered body: 400 invalid_signature, nothing recorded', async () => {
      const { body, key, id } = t.event();
      const headers = t.headers(body, id, { secret: current });
      const answer = await request(sources.receiver.url, t.path, {
        body: body.replace('}', ',"x":1}'),
        headers,
      });
      expect({ status: answer.status, code: codeOf(answer) }).toEqual({
        status: 400,
        code: 'invalid_signature',
      });
      expect(await rows(t.path, key)).toBe(0);
    });

  it('refuses a wrong secret: 400 invalid_signature', async () => {
    const { body, key, id } = t.event();
    const wrong =
      t.path === '/webhooks/discord' ? 'ab'.repeat(32) : `${current.includes(':') ? 'x:' : ''}wrong`;
    const answer = await request(sources.receiver.url, t.path, {
      body,
      headers: t.headers(body, id, { secret: wrong }),
    });
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({
      status: 400,
      code: 'invalid_signature',
    });
    expect(await rows(t.path, key)).toBe(0);
  });

  if (t.timestamped)
    it('refuses a stale timestamp: 400 timestamp_out_of_tolerance', async () => {
      const { body, key, id } = t.event();
      const headers = t.headers(body, id, { secret: current, timestamp: now() - 3600 });
      const answer = await request(sources.receiver.url, t.path, { body, headers });
      expect({ status: answer.status, code: codeOf(answer) }).toEqual({
        status: 400,
        code: 'timestamp_out_of_tolerance',
      });
      expect(await rows(t.path, key)).toBe(0);
    });

  it('refuses a request without its credential header: 400 missing_signature', async () => {
    const { body, id } = t.event();
    const headers = Object.fromEntries(
      Object.entries(t.headers(body, id, { secret: current })).filter(
        ([name]) => name.toLowerCase() !== t.credentialHeader.toLowerCase(),
      ),
    );
    const answer = await request(sources.receiver.url, t.path, { body, headers });
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({
      status: 400,
      code: 'missing_signature',
    });
  });
});

describe('two sources of one type', () => {
  it('each its own secret and dedupe namespace: one event id, two rows', async () => {
    const id = `evt_${randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify({ id, object: 'event', type: 'invoice.paid', data: { object: {} } });
    const to = (path: string, secret: string) =>
      request(sources.receiver.url, path, {
        body,
        headers: {
          'content-type': 'application/json',
          'stripe-signature': signStripe({ payload: body, secret }),
        },
      });
    expect(JSON.parse((await to('/webhooks/stripe', STRIPE_SECRET)).body)).toEqual({
      status: 'accepted',
      id,
    });
    expect(JSON.parse((await to('/webhooks/stripe-eu', STRIPE_EU_SECRET)).body)).toEqual({
      status: 'accepted',
      id,
    });
    expect(codeOf(await to('/webhooks/stripe', STRIPE_EU_SECRET))).toBe('invalid_signature');
    const providers = await sql(
      sources.db.url,
      'select provider from webhook_events where event_id = $1 order by 1',
      [id],
    );
    expect(providers.rows).toEqual([{ provider: 'stripe' }, { provider: 'stripe-eu' }]);
  });
});

describe('event keys', () => {
  it('an authentic event without its key: 400 invalid_payload', async () => {
    const body = JSON.stringify({ type: 'form.submitted' });
    const answer = await request(sources.receiver.url, '/webhooks/basic', {
      body,
      headers: signBasicAuth(SECRETS.basic[0]),
    });
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({ status: 400, code: 'invalid_payload' });
  });

  it('the api-key query parameter, and /metrics labelled by source name', async () => {
    const body = JSON.stringify([{ sg_event_id: randomUUID(), event: 'delivered' }]);
    const wrong = await request(sources.receiver.url, '/webhooks/sendgrid?token=nope', { body });
    expect(codeOf(wrong)).toBe('invalid_signature');
    const right = await request(sources.receiver.url, `/webhooks/sendgrid?token=${SECRETS.sendgrid[0]}`, {
      body,
    });
    expect(JSON.parse(right.body)).toEqual({ status: 'accepted', accepted: 1, duplicates: 0 });
    const metrics = await (await fetch(new URL('/metrics', sources.receiver.managementUrl))).text();
    expect(metrics).toMatch(/webhook_requests_total\{provider="sendgrid",outcome="accepted"\} 1/);
    expect(metrics).toMatch(/webhook_requests_total\{provider="sendgrid",outcome="invalid_signature"\} 1/);
  });
});
