import { startOtlpCollector, useTestDatabase, waitFor, type OtlpCollector } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_VERIFY_TOKEN, SECRETS, writeSourcesFile } from './sources-fixture.ts';
import { receiverEnv, spawnReceiver, type SpawnedReceiver } from '@webhook-inbox/scenarios/receiver';

// With tracing on, a request's server span carries its path and its query with every value redacted: never an API
// key sent in the query string (Graph's `key`, SendGrid's `token`), Meta's verify token, or a wrong guess at them.
// Attack test: `url.full` exported the whole URL, credentials included, to the collector.

const db = useTestDatabase();
let collector: OtlpCollector;
let receiver: SpawnedReceiver;

beforeAll(async () => {
  collector = await startOtlpCollector();
  receiver = await spawnReceiver({
    ...receiverEnv(db.url),
    WEBHOOK_SOURCES_FILE: writeSourcesFile(),
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
});
afterAll(async () => {
  await receiver?.stop();
  await collector?.close();
});

const REQUESTS = [
  {
    method: 'POST',
    query: `validationToken=graph-challenge&key=${SECRETS.graph[0]}`,
    path: '/webhooks/graph',
    redacted: 'validationToken=REDACTED&key=REDACTED',
  },
  {
    method: 'POST',
    query: `token=${SECRETS.sendgrid[0]}`,
    path: '/webhooks/sendgrid',
    redacted: 'token=REDACTED',
  },
  {
    method: 'POST',
    query: 'token=a-wrong-guess-at-the-token',
    path: '/webhooks/sendgrid',
    redacted: 'token=REDACTED',
  },
  {
    method: 'GET',
    query: `hub.mode=subscribe&hub.verify_token=${META_VERIFY_TOKEN}&hub.challenge=1158201444`,
    path: '/webhooks/meta',
    redacted: 'hub.mode=REDACTED&hub.verify_token=REDACTED&hub.challenge=REDACTED',
  },
  { method: 'GET', query: 'bare-secret-without-a-name', path: '/webhooks/meta', redacted: 'REDACTED' },
];

describe('request spans', () => {
  it('carry the path and the query with every value redacted (exported the API keys and verify token before)', async () => {
    for (const request of REQUESTS) {
      const response = await fetch(`${receiver.url}${request.path}?${request.query}`, {
        method: request.method,
        ...(request.method === 'POST' ? { body: '[]', headers: { 'content-type': 'application/json' } } : {}),
      });
      expect(response.status, `${request.path}?${request.query}`).toBeLessThan(500);
    }
    const urls = () =>
      collector.spans
        .filter((span) => span.kind === 2)
        .map((span) => String(span.attributes['url.full']))
        .sort();
    const expected = REQUESTS.map((request) => `${receiver.url}${request.path}?${request.redacted}`).sort();
    await waitFor(() => urls().length >= REQUESTS.length, { message: 'a server span per request' });
    expect(urls()).toEqual(expected);
    const exported = JSON.stringify(collector.spans);
    for (const secret of [
      SECRETS.graph[0],
      SECRETS.sendgrid[0],
      META_VERIFY_TOKEN,
      'a-wrong-guess',
      'bare-secret',
    ]) {
      expect(exported, secret).not.toContain(secret);
    }
  });
});
