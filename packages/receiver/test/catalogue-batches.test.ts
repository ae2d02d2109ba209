import { randomUUID } from 'node:crypto';
import { Signature } from '@hubspot/api-client';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { EVENTS_QUEUE } from '@webhook-inbox/inbox';
import { CATALOGUE, createProviders, catalogueEntry, type CatalogueEntry } from '@webhook-inbox/providers';
import { catalogueDelivery } from '@webhook-inbox/samples';
import { sampleCredentials } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/index.ts';
import { sql } from './helpers.ts';
import { codeOf, request, sampleDelivery, useSourcesReceiver, writeSourcesFile } from './sources-fixture.ts';

// The catalogue's batching providers through a real receiver over real HTTP: each item of a delivery is its own
// event under its own key (a row and a pg-boss job), all of one request in one transaction. SendGrid's deliveries
// are signed with the P-256 key of its sample credentials and checked by @sendgrid/eventwebhook (which verifies
// but does not sign); HubSpot's are signed by @hubspot/api-client.

const SENDGRID = catalogueEntry('sendgrid') as CatalogueEntry;
const SENDGRID_CREDENTIALS = sampleCredentials(SENDGRID);
const HUBSPOT_SECRET = 'hubspot-client-secret-batches';
const HUBSPOT_URL = 'https://hooks.example.com/webhooks/crm';

/**
 * Every catalogue type whose requests carry several events, and where a body keeps them: the array itself, or the
 * field whose array it is.
 */
const BATCH_FIELD: Readonly<Record<string, string | undefined>> = {
  sendgrid: undefined,
  hubspot: undefined,
  adyen: 'notificationItems',
  meta: 'entry',
};
const BATCHING = Object.keys(BATCH_FIELD);
const urlOf = (type: string) =>
  type === 'hubspot' ? 'https://hooks.example.com/webhooks/hubspot' : undefined;

/** Two bodies of one batching type as one: the first's items, then the second's. */
function mergedBody(type: string, first: string, second: string): string {
  const field = BATCH_FIELD[type];
  const [a, b] = [
    JSON.parse(first) as Record<string, unknown[]>,
    JSON.parse(second) as Record<string, unknown[]>,
  ];
  if (field === undefined)
    return JSON.stringify([...(a as unknown as unknown[]), ...(b as unknown as unknown[])]);
  return JSON.stringify({ ...a, [field]: [...a[field]!, ...b[field]!] });
}

const sources = useSourcesReceiver(() => ({
  // A 10,000-item batch takes 1-2 s of database time on a quiet machine and has been seen at 5.6 s on a busy one,
  // past the default 5 s deadline: the tests prove what is recorded, not how fast (docs/performance.md#batches).
  DATABASE_TIMEOUT_MS: '60000',
  WEBHOOK_SOURCES_FILE: writeSourcesFile(
    [
      'sources:',
      '  mail:',
      '    type: sendgrid',
      `    secrets: [${JSON.stringify(SENDGRID_CREDENTIALS.secret)}]`,
      '  crm:',
      '    type: hubspot',
      `    secrets: [${HUBSPOT_SECRET}]`,
      `    url: ${HUBSPOT_URL}`,
      ...BATCHING.flatMap((type) => {
        const entry = catalogueEntry(type) as CatalogueEntry;
        return [
          `  ${type}:`,
          `    type: ${type}`,
          `    secrets: [${JSON.stringify(sampleCredentials(entry).secret)}]`,
          ...(urlOf(type) === undefined ? [] : [`    url: ${urlOf(type)}`]),
          ...(type === 'meta' ? ['    verifyToken: catalogue-batches-token'] : []),
        ];
      }),
      '',
    ].join('\n'),
    'catalogue-batches.yaml',
  ),
}));

/** `count` fresh event ids, sorted (the order the receiver inserts them in). */
const newIds = (count: number): string[] => Array.from({ length: count }, () => randomUUID()).sort();

/** A SendGrid event of this id, as its Event Webhook posts it. */
const sendgridItem = (id: string, event = 'delivered') => ({
  email: 'user@example.com',
  timestamp: 1_733_356_800,
  event,
  sg_event_id: id,
  sg_message_id: 'msg_1',
});

/** A SendGrid delivery of these items, signed; @sendgrid/eventwebhook accepts its signature. */
function sendgridDelivery(items: readonly unknown[]) {
  const delivery = catalogueDelivery('sendgrid', {
    ...SENDGRID_CREDENTIALS,
    type: 'delivered',
    payload: JSON.stringify(items),
  })!;
  const webhook = new EventWebhook();
  const verified = webhook.verifySignature(
    webhook.convertPublicKeyToECDSA(SENDGRID_CREDENTIALS.secret),
    delivery.body,
    delivery.headers['x-twilio-email-event-webhook-signature']!,
    delivery.headers['x-twilio-email-event-webhook-timestamp']!,
  );
  expect(verified).toBe(true);
  return { body: delivery.body, headers: delivery.headers };
}

/** Posts these SendGrid items to the `mail` source as one signed delivery. */
const postMail = (items: readonly unknown[]) =>
  request(sources.receiver.url, '/webhooks/mail', sendgridDelivery(items));

/** The rows of `keys` under `source`, with their types; and the jobs of every key of `source`, counted per key. */
async function recorded(source: string, keys: readonly string[]) {
  const events = await sql(
    sources.db.url,
    'select event_id, type from webhook_events where provider = $1 and event_id = any($2) order by event_id',
    [source, keys],
  );
  const jobs = await sql(
    sources.db.url,
    `select data->>'eventId' as key, count(*)::int as n from pgboss.job
      where name = $1 and data->>'provider' = $2 group by 1 order by 1`,
    [EVENTS_QUEUE, source],
  );
  return {
    events: events.rows as Array<{ event_id: string; type: string }>,
    jobs: jobs.rows as Array<{ key: string; n: number }>,
  };
}

/** Every row of `source`: a batch recorded whole would show here under a key no item has. */
async function allKeys(source: string): Promise<string[]> {
  const rows = await sql(sources.db.url, 'select event_id from webhook_events where provider = $1', [source]);
  return (rows.rows as Array<{ event_id: string }>).map((row) => row.event_id).sort();
}

describe('SendGrid batches: one event per sg_event_id', () => {
  it('1 known + 1 new sg_event_id records exactly 1 new row and 1 new job (was a new batch:<hash> row, re-running the known one)', async () => {
    const [known, fresh] = newIds(2) as [string, string];
    const first = await postMail([sendgridItem(known)]);
    expect(first.status).toBe(200);
    const before = await allKeys('mail');

    const answer = await postMail([sendgridItem(known, 'open'), sendgridItem(fresh, 'click')]);
    expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
      status: 200,
      body: { status: 'accepted', accepted: 1, duplicates: 1 },
    });
    expect(await allKeys('mail')).toEqual([...before, fresh].sort());
    const state = await recorded('mail', [known, fresh]);
    expect(state.events).toEqual([
      { event_id: known, type: 'delivered' },
      { event_id: fresh, type: 'click' },
    ]);
    expect(state.jobs).toEqual([
      { key: known, n: 1 },
      { key: fresh, n: 1 },
    ]);
  });

  it('an sg_event_id repeated inside one batch is recorded once: one row, one job', async () => {
    const [twice, once] = newIds(2) as [string, string];
    const answer = await postMail([sendgridItem(twice), sendgridItem(once), sendgridItem(twice, 'open')]);
    expect(JSON.parse(answer.body)).toEqual({ status: 'accepted', accepted: 2, duplicates: 1 });
    const state = await recorded('mail', [twice, once]);
    expect(state.events.map((event) => event.event_id)).toEqual([twice, once]);
    expect(state.jobs.filter((job) => [twice, once].includes(job.key))).toEqual([
      { key: twice, n: 1 },
      { key: once, n: 1 },
    ]);
  });

  it('the same batch posted at once over 6 connections records each item once (one row, one job each)', async () => {
    const ids = newIds(200);
    const delivery = sendgridDelivery(ids.map((id) => sendgridItem(id)));
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => request(sources.receiver.url, '/webhooks/mail', delivery)),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const counts = answers.map(
      (answer) => JSON.parse(answer.body) as { accepted: number; duplicates: number },
    );
    // Between them the requests created each item once, whichever transaction won each row.
    expect(counts.reduce((sum, { accepted }) => sum + accepted, 0)).toBe(ids.length);
    expect(counts.every(({ accepted, duplicates }) => accepted + duplicates === ids.length)).toBe(true);
    const state = await recorded('mail', ids);
    expect(state.events).toHaveLength(ids.length);
    expect(state.jobs.filter((job) => ids.includes(job.key))).toEqual(ids.map((key) => ({ key, n: 1 })));
  });
});

describe('the item cap (BATCH_MAX_ITEMS, default 10,000)', () => {
  /** How many of `ids` are recorded under `mail`, and how many jobs point at them. */
  async function counts(ids: readonly string[]) {
    const result = await sql(
      sources.db.url,
      `select (select count(*)::int from webhook_events where provider = 'mail' and event_id = any($2)) as events,
              (select count(*)::int from pgboss.job
                where name = $1 and data->>'provider' = 'mail' and data->>'eventId' = any($2)) as jobs`,
      [EVENTS_QUEUE, ids],
    );
    return result.rows[0] as { events: number; jobs: number };
  }

  it('a signed 10,000-item batch (1.5 MB: over WEBHOOK_MAX_BODY_BYTES, within the batch body limit) records in one request: 10,000 rows and 10,000 jobs', async () => {
    const ids = newIds(10_000);
    const delivery = sendgridDelivery(ids.map((id) => sendgridItem(id)));
    expect(Buffer.byteLength(delivery.body)).toBeGreaterThan(1_048_576);
    const answer = await request(sources.receiver.url, '/webhooks/mail', delivery);
    expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
      status: 200,
      body: { status: 'accepted', accepted: 10_000, duplicates: 0 },
    });
    expect(await counts(ids)).toEqual({ events: 10_000, jobs: 10_000 });
  });

  it('a signed batch of 10,001 is refused whole: 413 batch_too_large naming the cap, nothing recorded (was recorded at any size: 20,000 items passed the database deadline, 503, retried as large)', async () => {
    const ids = newIds(10_001);
    const answer = await postMail(ids.map((id) => sendgridItem(id)));
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({ status: 413, code: 'batch_too_large' });
    expect(answer.body).toContain('at most 10000');
    expect(await counts(ids)).toEqual({ events: 0, jobs: 0 });
  });
});

describe.each(BATCHING)('%s: every item its own event', (type) => {
  const entry = catalogueEntry(type) as CatalogueEntry;
  const sign = (payload?: string) => sampleDelivery(entry, urlOf(type), payload)!;

  it('a batch of one known and one new item records exactly the new one: 1 new row, 1 new job', async () => {
    const [known, fresh] = [sign(), sign()];
    const first = await request(sources.receiver.url, `/webhooks/${type}`, known);
    expect(first.status).toBe(200);
    const before = await allKeys(type);
    const both = sign(mergedBody(type, known.body, fresh.body));
    const answer = await request(sources.receiver.url, `/webhooks/${type}`, both);
    expect(answer.status).toBe(200);
    expect(await allKeys(type)).toEqual([...before, fresh.key!].sort());
    const jobs = (await recorded(type, [known.key!, fresh.key!])).jobs;
    expect(jobs.filter((job) => job.key === known.key || job.key === fresh.key)).toEqual(
      [known.key!, fresh.key!].sort().map((key) => ({ key, n: 1 })),
    );
  });
});

it('BATCH_FIELD lists every catalogue type whose requests carry several events', () => {
  const url = (entry: CatalogueEntry) =>
    entry.facts.requiredOptions.includes('url') ? 'https://hooks.example.com/webhooks/x' : undefined;
  const batching = CATALOGUE.filter(
    (entry) =>
      entry.create({ secrets: [sampleCredentials(entry).secret], url: url(entry), verifyToken: 't' }).batches,
  ).map((entry) => entry.type);
  expect(batching.sort()).toEqual([...BATCHING].sort());
});

it("the batch body limit is a batching source's only: 1.5 MB refused at /webhooks/stripe, 8 MiB + 1 at a batching source (413 payload_too_large)", async () => {
  const oversize = async (path: string, bytes: number) => {
    const answer = await request(sources.receiver.url, path, { body: 'x'.repeat(bytes) });
    return { status: answer.status, code: codeOf(answer) };
  };
  const refused = { status: 413, code: 'payload_too_large' };
  expect(await oversize('/webhooks/stripe', 1_500_000)).toEqual(refused);
  expect(await oversize('/webhooks/mail', 8 * 1024 * 1024 + 1)).toEqual(refused);
});

it('SENDGRID_WEBHOOK_SECRET declares the same batching source as the file: one event per item', () => {
  const { sources: declared, toleranceSeconds } = parseConfig({
    DATABASE_URL: sources.db.url,
    SENDGRID_WEBHOOK_SECRET: SENDGRID_CREDENTIALS.secret,
  });
  const provider = createProviders({ sources: declared, toleranceSeconds }).get('sendgrid');
  const ids = newIds(2);
  const { body, headers } = sendgridDelivery(ids.map((id) => sendgridItem(id)));
  const reception = provider?.receive?.(
    { rawBody: Buffer.from(body), header: (name) => headers[name.toLowerCase()], method: 'POST' },
    new Date(),
  );
  expect(provider?.batches).toBe(true);
  expect(reception?.kind === 'events' ? reception.events.map((event) => event.eventId) : []).toEqual(ids);
});

describe('HubSpot batches: one event per portalId:subscriptionId:eventId:occurredAt', () => {
  it('a batch signed by @hubspot/api-client: each item its own row and job; a known item a duplicate (was one batch:<hash> row)', async () => {
    const item = (eventId: number, subscriptionType = 'contact.creation') => ({
      eventId,
      subscriptionId: 2489,
      portalId: 62515,
      occurredAt: 1_733_356_800_000,
      subscriptionType,
      attemptNumber: 0,
      objectId: 123,
    });
    const deliver = (items: readonly unknown[]) => {
      const body = JSON.stringify(items);
      const timestamp = Date.now();
      const signature = Signature.getSignature('POST', 'v3', {
        signature: '',
        clientSecret: HUBSPOT_SECRET,
        requestBody: body,
        url: HUBSPOT_URL,
        timestamp,
      });
      const headers = {
        'content-type': 'application/json',
        'x-hubspot-signature-v3': signature,
        'x-hubspot-request-timestamp': String(timestamp),
      };
      return request(sources.receiver.url, '/webhooks/crm', { body, headers });
    };
    const base = Date.now();
    const key = (eventId: number) => `62515:2489:${eventId}:1733356800000`;
    const first = await deliver([item(base)]);
    expect(JSON.parse(first.body)).toEqual({ status: 'accepted', accepted: 1, duplicates: 0 });
    const second = await deliver([item(base), item(base + 1, 'contact.deletion')]);
    expect(JSON.parse(second.body)).toEqual({ status: 'accepted', accepted: 1, duplicates: 1 });
    expect(await allKeys('crm')).toEqual([key(base), key(base + 1)].sort());
    const state = await recorded('crm', [key(base), key(base + 1)]);
    expect(state.events).toEqual([
      { event_id: key(base), type: 'contact.creation' },
      { event_id: key(base + 1), type: 'contact.deletion' },
    ]);
    expect(state.jobs).toEqual([
      { key: key(base), n: 1 },
      { key: key(base + 1), n: 1 },
    ]);
  });
});
