import { createHmac } from 'node:crypto';
import { signEd25519, signHmac, type HmacSpec } from '@webhook-inbox/providers';
import { describe, expect, it } from 'vitest';
import { sql } from './helpers.ts';
import {
  codeOf,
  DISCORD_PRIVATE_KEY,
  META_VERIFY_TOKEN,
  request,
  SECRETS,
  useSourcesReceiver,
} from './sources-fixture.ts';

// Each provider's handshake, answered by a real receiver over real HTTP and never recorded: the examples are the
// providers' documented ones (Slack's and Zoom's bodies, Meta's challenge, Graph's validation token), signed where
// the provider signs them.

const sources = useSourcesReceiver();

const signed = (header: string, extra: Partial<HmacSpec> = {}): HmacSpec => ({
  header,
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: 'v0=',
  signed: 'v0:{timestamp}:{body}',
  ...extra,
});
const SLACK = signed('X-Slack-Signature', { timestamp: { header: 'X-Slack-Request-Timestamp' } });
const ZOOM = signed('x-zm-signature', { timestamp: { header: 'x-zm-request-timestamp' } });

async function eventRows(): Promise<number> {
  const result = await sql(sources.db.url, 'select count(*)::int as n from webhook_events');
  return (result.rows[0] as { n: number }).n;
}

describe('handshakes: answered, never recorded', () => {
  it('Slack url_verification (signed): the challenge, as text; unsigned: 400', async () => {
    const before = await eventRows();
    const body = JSON.stringify({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    const headers = signHmac({ hmac: SLACK, secret: SECRETS.slack[0], payload: body });
    const answer = await request(sources.receiver.url, '/webhooks/slack', { body, headers });
    expect(answer).toEqual({
      status: 200,
      body: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      contentType: 'text/plain; charset=utf-8',
    });
    expect(codeOf(await request(sources.receiver.url, '/webhooks/slack', { body }))).toBe(
      'missing_signature',
    );
    expect(await eventRows()).toBe(before);
  });

  it('Zoom endpoint.url_validation: plainToken and its HMAC-SHA256 (hex) under the secret token', async () => {
    const before = await eventRows();
    const body =
      '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}';
    const headers = signHmac({ hmac: ZOOM, secret: SECRETS.zoom[0], payload: body });
    const answer = await request(sources.receiver.url, '/webhooks/zoom', { body, headers });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
      encryptedToken: createHmac('sha256', SECRETS.zoom[0]).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'),
    });
    expect(await eventRows()).toBe(before);
    // An ordinary Zoom event on the same source is recorded.
    const event = JSON.stringify({ event: 'meeting.started', event_ts: Date.now(), payload: { object: {} } });
    const recorded = await request(sources.receiver.url, '/webhooks/zoom', {
      body: event,
      headers: signHmac({ hmac: ZOOM, secret: SECRETS.zoom[0], payload: event }),
    });
    expect(JSON.parse(recorded.body)).toMatchObject({ status: 'accepted' });
    expect(await eventRows()).toBe(before + 1);
  });

  it('Meta / WhatsApp GET hub.mode=subscribe: hub.challenge when hub.verify_token matches, else 400', async () => {
    const before = await eventRows();
    const path = (token: string) =>
      `/webhooks/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${token}`;
    expect(await request(sources.receiver.url, path(META_VERIFY_TOKEN), { method: 'GET' })).toEqual({
      status: 200,
      body: '1158201444',
      contentType: 'text/plain; charset=utf-8',
    });
    const wrong = await request(sources.receiver.url, path('guess'), { method: 'GET' });
    expect({ status: wrong.status, code: codeOf(wrong) }).toEqual({ status: 400, code: 'invalid_signature' });
    expect(await eventRows()).toBe(before);
    // A source without a GET handshake has no GET route.
    expect((await request(sources.receiver.url, '/webhooks/github', { method: 'GET' })).status).toBe(404);
  });

  it('Discord PING after the Ed25519 check: PONG; unsigned: 400', async () => {
    const before = await eventRows();
    const body = '{"id":"1","application_id":"2","type":1,"version":1}';
    const headers = signEd25519({
      ed25519: { signatureHeader: 'X-Signature-Ed25519', timestampHeader: 'X-Signature-Timestamp' },
      privateKey: DISCORD_PRIVATE_KEY,
      payload: body,
    });
    const answer = await request(sources.receiver.url, '/webhooks/discord', { body, headers });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: '{"type":1}' });
    expect(answer.contentType).toBe('application/json');
    expect(codeOf(await request(sources.receiver.url, '/webhooks/discord', { body }))).toBe(
      'missing_signature',
    );
    expect(await eventRows()).toBe(before);
  });

  it('Microsoft Graph validationToken: echoed as text once the API key in the URL matches', async () => {
    const before = await eventRows();
    const token =
      'Validation: Testing client application reachability for subscription Request-Id: 25470e16-6b8e-4bdf-9d6a-e70ed4d3f5c4';
    const path = (key: string) => `/webhooks/graph?${key}validationToken=${encodeURIComponent(token)}`;
    const answer = await request(sources.receiver.url, path(`key=${SECRETS.graph[0]}&`), {
      headers: { 'content-type': 'text/plain' },
    });
    expect(answer).toEqual({ status: 200, body: token, contentType: 'text/plain; charset=utf-8' });
    expect(codeOf(await request(sources.receiver.url, path('')))).toBe('missing_signature');
    expect(await eventRows()).toBe(before);
  });

  it('X CRC GET crc_token: response_token, the base64 HMAC-SHA256 under the consumer secret', async () => {
    const before = await eventRows();
    const answer = await request(sources.receiver.url, '/webhooks/x?crc_token=cmVhbGx5LXJhbmRvbQ', {
      method: 'GET',
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      response_token: `sha256=${createHmac('sha256', SECRETS.x[0]).update('cmVhbGx5LXJhbmRvbQ').digest('base64')}`,
    });
    const missing = await request(sources.receiver.url, '/webhooks/x', { method: 'GET' });
    expect({ status: missing.status, code: codeOf(missing) }).toEqual({
      status: 400,
      code: 'invalid_payload',
    });
    expect(await eventRows()).toBe(before);
  });

  it('counts handshakes in /metrics by source', async () => {
    const metrics = await (await fetch(new URL('/metrics', sources.receiver.managementUrl))).text();
    expect(metrics).toMatch(/webhook_requests_total\{provider="meta",outcome="handshake"\} 1/);
    expect(metrics).toMatch(/webhook_requests_total\{provider="x",outcome="handshake"\} 1/);
  });
});
