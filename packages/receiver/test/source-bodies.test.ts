import { randomUUID } from 'node:crypto';
import { signBasicAuth, signHmac, type HmacSpec } from '@webhook-inbox/providers';
import { EVENTS_QUEUE } from '@webhook-inbox/inbox';
import { describe, expect, it } from 'vitest';
import { sql } from './helpers.ts';
import { codeOf, request, SECRETS, useSourcesReceiver } from './sources-fixture.ts';

// Batch deliveries (Adyen's notificationItems, SendGrid's array, Graph's value) and form bodies (Twilio behind a
// proxy, Slack interactivity's JSON `payload` field), through a real receiver over real HTTP.

const sources = useSourcesReceiver();

const adyenItem = (pspReference: string, eventCode = 'AUTHORISATION') => ({
  NotificationRequestItem: {
    eventCode,
    pspReference,
    success: 'true',
    amount: { currency: 'EUR', value: 'BIG' },
  },
});
const adyenBody = (items: unknown[]) =>
  // An amount past 2^53, written as JSON text (a JS number would round it).
  JSON.stringify({ live: 'false', notificationItems: items }).replaceAll('"BIG"', '12345678901234567890');

async function count(text: string, values: unknown[]): Promise<number> {
  return ((await sql(sources.db.url, text, values)).rows[0] as { n: number }).n;
}

describe('batch deliveries', () => {
  it('500 events with 100 already recorded: 400 new rows and jobs in one transaction, [accepted]; redelivery all duplicate', async () => {
    const refs = Array.from({ length: 500 }, () => randomUUID());
    const headers = { 'content-type': 'application/json', ...signBasicAuth(SECRETS.adyen[0]) };
    const earlier = await request(sources.receiver.url, '/webhooks/adyen', {
      body: adyenBody(refs.slice(200, 300).map((ref) => adyenItem(ref))),
      headers,
    });
    expect({ status: earlier.status, body: earlier.body }).toEqual({ status: 200, body: '[accepted]' });

    const body = adyenBody(refs.map((ref) => adyenItem(ref)));
    const answer = await request(sources.receiver.url, '/webhooks/adyen', { body, headers });
    expect(answer).toEqual({ status: 200, body: '[accepted]', contentType: 'text/plain; charset=utf-8' });

    const keys = refs.map((ref) => `AUTHORISATION:${ref}`);
    const fresh = [...keys.slice(0, 200), ...keys.slice(300)];
    expect(
      await count(
        `select count(*)::int as n from webhook_events where provider = 'adyen' and event_id = any($1)`,
        [keys],
      ),
    ).toBe(500);
    // The 400 rows the second request created share one transaction id; the 100 earlier ones another.
    expect(
      await count(
        `select count(distinct xmin::text)::int as n from webhook_events where provider = 'adyen' and event_id = any($1)`,
        [fresh],
      ),
    ).toBe(1);
    expect(
      await count(
        `select count(*)::int as n from pgboss.job where name = $1 and data->>'provider' = 'adyen' and data->>'eventId' = any($2)`,
        [EVENTS_QUEUE, keys],
      ),
    ).toBe(500);
    // Each item is its own payload, digit for digit.
    const stored = await sql(
      sources.db.url,
      `select p.payload::text as payload, e.type from webhook_events e
         join webhook_event_payloads p using (provider, event_id, received_at)
        where e.provider = 'adyen' and e.event_id = $1`,
      [keys[0]],
    );
    expect(stored.rows[0]).toEqual({
      type: 'AUTHORISATION',
      payload: expect.stringContaining('"value": 12345678901234567890') as unknown,
    });

    const metricsBefore = await (await fetch(new URL('/metrics', sources.receiver.managementUrl))).text();
    const again = await request(sources.receiver.url, '/webhooks/adyen', { body, headers });
    expect(again.body).toBe('[accepted]');
    const metricsAfter = await (await fetch(new URL('/metrics', sources.receiver.managementUrl))).text();
    const duplicates = (text: string) =>
      Number(/webhook_requests_total\{provider="adyen",outcome="duplicate"\} (\d+)/.exec(text)?.[1] ?? 0);
    expect(duplicates(metricsAfter) - duplicates(metricsBefore)).toBe(1);
    expect(
      await count(
        `select count(*)::int as n from webhook_events where provider = 'adyen' and event_id = any($1)`,
        [keys],
      ),
    ).toBe(500);
  });

  it('a batch with an item lacking its key is refused whole (400), nothing of it recorded', async () => {
    const good = randomUUID();
    const answer = await request(sources.receiver.url, '/webhooks/adyen', {
      body: adyenBody([adyenItem(good), { NotificationRequestItem: { eventCode: 'REFUND' } }]),
      headers: signBasicAuth(SECRETS.adyen[0]),
    });
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({ status: 400, code: 'invalid_payload' });
    expect(
      await count(
        `select count(*)::int as n from webhook_events where provider = 'adyen' and event_id = $1`,
        [`AUTHORISATION:${good}`],
      ),
    ).toBe(0);
  });

  it('SendGrid: the body is the array; default answer counts new and duplicate events', async () => {
    const items = [randomUUID(), randomUUID()].map((id) => ({ sg_event_id: id, event: 'open' }));
    const path = `/webhooks/sendgrid?token=${SECRETS.sendgrid[0]}`;
    const first = await request(sources.receiver.url, path, { body: JSON.stringify([items[0]]) });
    expect(JSON.parse(first.body)).toEqual({ status: 'accepted', accepted: 1, duplicates: 0 });
    const both = await request(sources.receiver.url, path, { body: JSON.stringify(items) });
    expect(JSON.parse(both.body)).toEqual({ status: 'accepted', accepted: 1, duplicates: 1 });
    const none = await request(sources.receiver.url, path, { body: '[]' });
    expect(JSON.parse(none.body)).toEqual({ status: 'accepted', accepted: 0, duplicates: 0 });
  });
});

describe('form bodies', () => {
  const TWILIO: HmacSpec = {
    header: 'X-Twilio-Signature',
    algorithm: 'sha1',
    encoding: 'base64',
    prefix: '',
    signed: '{url}{form}',
  };
  // Twilio's documented example: this auth token, URL and parameters sign to 0/KCTR6DLpKmkAf8muzZqo1nDgQ=.
  const params = {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+12349013030',
    Digits: '1234',
    From: '+12349013030',
    To: '+18005551212',
  };

  it('Twilio behind a proxy: signed over the public URL and the sorted fields; stored as fields plus raw text', async () => {
    const body = new URLSearchParams(params).toString();
    expect(
      signHmac({
        hmac: TWILIO,
        secret: SECRETS.twilio[0],
        payload: body,
        url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
      }),
    ).toEqual({ 'X-Twilio-Signature': '0/KCTR6DLpKmkAf8muzZqo1nDgQ=' });
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'X-Twilio-Signature': '0/KCTR6DLpKmkAf8muzZqo1nDgQ=',
    };
    // The receiver is reached as http://127.0.0.1:<port>/webhooks/twilio: only the configured public URL matches.
    const answer = await request(sources.receiver.url, '/webhooks/twilio?foo=1&bar=2', { body, headers });
    expect(JSON.parse(answer.body)).toEqual({ status: 'accepted', id: 'CA1234567890ABCDE' });
    const stored = await sql(
      sources.db.url,
      `select p.payload as payload, e.type from webhook_events e
         join webhook_event_payloads p using (provider, event_id, received_at)
        where e.provider = 'twilio' and e.event_id = 'CA1234567890ABCDE'`,
    );
    expect(stored.rows[0]).toEqual({ type: 'call', payload: { form: params, raw: body } });
    // Another query string, or the fields in another order with one changed: not what was signed.
    const otherQuery = await request(sources.receiver.url, '/webhooks/twilio?foo=1', { body, headers });
    expect(codeOf(otherQuery)).toBe('invalid_signature');
    const changed = await request(sources.receiver.url, '/webhooks/twilio?foo=1&bar=2', {
      body: new URLSearchParams({ ...params, Digits: '9999' }).toString(),
      headers,
    });
    expect(codeOf(changed)).toBe('invalid_signature');
  });

  it('Slack interactivity: the payload field parsed as JSON, keyed and typed from inside it', async () => {
    const slack: HmacSpec = {
      header: 'X-Slack-Signature',
      algorithm: 'sha256',
      encoding: 'hex',
      prefix: 'v0=',
      signed: 'v0:{timestamp}:{body}',
      timestamp: { header: 'X-Slack-Request-Timestamp' },
    };
    const triggerId = `${Date.now()}.47445629121.803a0bc887a14d10d2c659f1e89ce2a6d`;
    const payload = { type: 'block_actions', trigger_id: triggerId, actions: [{ value: 'approve' }] };
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const answer = await request(sources.receiver.url, '/webhooks/slack-interactivity', {
      body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...signHmac({ hmac: slack, secret: SECRETS.slack[0], payload: body }),
      },
    });
    expect(JSON.parse(answer.body)).toEqual({ status: 'accepted', id: triggerId });
    const stored = await sql(
      sources.db.url,
      `select p.payload as payload, e.type from webhook_events e
         join webhook_event_payloads p using (provider, event_id, received_at)
        where e.provider = 'slack-interactivity' and e.event_id = $1`,
      [triggerId],
    );
    expect(stored.rows[0]).toEqual({ type: 'block_actions', payload: { form: { payload }, raw: body } });
  });
});
