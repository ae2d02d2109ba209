import { CATALOGUE, CERTIFICATE_SOURCE_TYPES, type CatalogueEntry } from '@webhook-inbox/providers';
import { CATALOGUE_TYPES_WITHOUT_SAMPLES } from '@webhook-inbox/samples';
import { sampleCredentials } from '@webhook-inbox/testing';
import { EVENTS_QUEUE } from '@webhook-inbox/inbox';
import { describe, expect, it } from 'vitest';
import { sql } from './helpers.ts';
import { codeOf, request, sampleDelivery, useSourcesReceiver, writeSourcesFile } from './sources-fixture.ts';

// Every catalogue provider, declared at once in one sources file of one receiver on a real PostgreSQL, reached over
// real HTTP with deliveries signed by the provider's own sign function: accepted (a row with the key and type, a
// pg-boss job), then a duplicate, and a tampered body refused.

const secretOf = (entry: CatalogueEntry) => sampleCredentials(entry).secret;
/** The dashboard verify token of the providers with a GET subscription handshake (Meta). */
const VERIFY_TOKEN = 'catalogue-verify-token';

const urlOf = (entry: CatalogueEntry) =>
  entry.facts.requiredOptions.includes('url')
    ? `https://hooks.example.com/webhooks/${entry.type}`
    : undefined;

function catalogueYaml(): string {
  const lines = ['sources:'];
  for (const entry of CATALOGUE) {
    lines.push(
      `  ${entry.type}:`,
      `    type: ${entry.type}`,
      `    secrets: [${JSON.stringify(secretOf(entry))}]`,
    );
    const url = urlOf(entry);
    if (url !== undefined) lines.push(`    url: ${url}`);
    if (entry.facts.requiredOptions.includes('verifyToken')) lines.push(`    verifyToken: ${VERIFY_TOKEN}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The one event of `key` under the source `name`, and how many pg-boss jobs point at it. */
async function stored(databaseUrl: string, name: string, key: string) {
  const events = await sql(
    databaseUrl,
    'select event_id, type from webhook_events where provider = $1 and event_id = $2',
    [name, key],
  );
  const jobs = await sql(
    databaseUrl,
    `select count(*)::int as n from pgboss.job where name = $1 and data->>'provider' = $2 and data->>'eventId' = $3`,
    [EVENTS_QUEUE, name, key],
  );
  return { events: events.rows, jobs: (jobs.rows[0] as { n: number }).n };
}

const BODY_UNSIGNED: ReadonlySet<string> = new Set(['gitlab', 'postmark', 'mailgun']);
/** The fixed answer of a provider that requires one (Discord's deferred reply, Slack's empty 200), or `undefined`. */
const acknowledgementOf = (entry: CatalogueEntry) =>
  entry.create({ secrets: [secretOf(entry)], url: urlOf(entry), verifyToken: VERIFY_TOKEN }).response?.body;
/** Discord saves an interactions URL only when its deliberately bad signatures are answered 401. */
const REFUSAL_STATUS: Readonly<Record<string, number>> = { discord: 401 };

const sources = useSourcesReceiver(() => ({
  WEBHOOK_SOURCES_FILE: writeSourcesFile(catalogueYaml()),
  STANDARD_WEBHOOKS: '',
}));

it('has a sample delivery for every catalogue provider', () => {
  expect(CATALOGUE_TYPES_WITHOUT_SAMPLES).toEqual([]);
});

// AWS SNS and PayPal fetch a certificate named in the message: certificate-sources.test.ts serves theirs.
const UNCERTIFIED = CATALOGUE.filter((entry) => !CERTIFICATE_SOURCE_TYPES.includes(entry.type));

describe.each(UNCERTIFIED.map((entry) => [entry.type, entry] as const))('%s', (type, entry) => {
  const path = `/webhooks/${type}`;
  const sign = (payload?: string) => sampleDelivery(entry, urlOf(entry), payload);

  it('accepts a signed delivery once (a row with its key and type, a job), then answers duplicate', async () => {
    const acknowledgement = acknowledgementOf(entry);
    // The receiver's `status` (accepted, duplicate), or the body of the provider's fixed acknowledgement.
    const answerOf = (body: string) =>
      acknowledgement !== undefined ? body : (JSON.parse(body) as { status: string }).status;
    const delivery = sign();
    expect(delivery).toBeDefined();
    const { body, headers, key } = delivery!;
    const first = await request(sources.receiver.url, path, { body, headers });
    expect({ status: first.status, answer: answerOf(first.body) }).toEqual({
      status: 200,
      answer: acknowledgement ?? 'accepted',
    });
    expect(await stored(sources.db.url, type, key!)).toEqual({
      events: [{ event_id: key, type: delivery!.type }],
      jobs: 1,
    });
    const again = await request(sources.receiver.url, path, { body, headers });
    expect({ status: again.status, answer: answerOf(again.body) }).toEqual({
      status: 200,
      answer: acknowledgement ?? 'duplicate',
    });
    // The row and its one job are what make the redelivery a duplicate, whatever the answer's text.
    expect(await stored(sources.db.url, type, key!)).toEqual({
      events: [{ event_id: key, type: delivery!.type }],
      jobs: 1,
    });
  });

  // GitLab (a token), Postmark (Basic Auth) and Mailgun (a signed token in the body) authenticate the sender, not
  // the body's bytes: a changed body is still theirs, so they have no tampered-body case.
  if (!BODY_UNSIGNED.has(type))
    it('refuses a tampered body with invalid_signature (400, or the status the provider requires), recording nothing', async () => {
      const delivery = sign()!;
      const index = delivery.body.lastIndexOf('"') - 1;
      const tampered = `${delivery.body.slice(0, index)}${delivery.body[index] === 'x' ? 'y' : 'x'}${delivery.body.slice(index + 1)}`;
      const answer = await request(sources.receiver.url, path, { body: tampered, headers: delivery.headers });
      expect({ status: answer.status, code: codeOf(answer) }).toEqual({
        status: REFUSAL_STATUS[type] ?? 400,
        code: 'invalid_signature',
      });
      expect((await stored(sources.db.url, type, delivery.key!)).events).toEqual([]);
    });
});
