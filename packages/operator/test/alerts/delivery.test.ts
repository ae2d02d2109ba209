import { readFileSync } from 'node:fs';
import { waitFor } from '@webhook-inbox/testing';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alerter, AlertOutcome } from '../../src/alerts/alerter.ts';
import { createAlerter } from '../../src/alerts/delivery.ts';
import {
  effectFailed,
  freePort,
  PERSONAL,
  shopifyOrderWithPersonalData,
  startHook,
  stripeCheckoutWithPersonalData,
} from '../alert-support.ts';

const CHECKOUT = readFileSync(
  new URL('../../../../test/fixtures/stripe/checkout.session.completed.json', import.meta.url),
  'utf8',
);
const checkout = JSON.parse(CHECKOUT) as {
  id: string;
  data: { object: { customer_details: { email: string; name: string } } };
};

function collectingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function track(alerter: Alerter): Alerter {
  cleanups.push(() => alerter.close({ timeoutMs: 200 }));
  return alerter;
}

describe('createAlerter', () => {
  it('POSTs a Slack-compatible message with every field, well within 60 s', async () => {
    const hook = await startHook();
    cleanups.push(hook.close);
    const { logger } = collectingLogger();
    const alerter = track(createAlerter({ url: hook.url, logger }));

    const started = Date.now();
    alerter.notify({
      kind: 'effect_failed',
      provider: 'stripe',
      eventId: checkout.id,
      type: 'checkout.session.completed',
      effect: 'send-welcome-email',
      error: new Error(`550 mailbox unavailable: ${checkout.data.object.customer_details.email}`),
      attempts: 9,
      payload: CHECKOUT,
    });
    await waitFor(() => hook.received.length === 1, { timeout: 10_000, message: 'the alert to arrive' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(60_000);

    const [message] = hook.received;
    expect(message?.method).toBe('POST');
    expect(message?.contentType).toBe('application/json');
    const text = message?.body.text ?? '';
    expect(text).toContain('provider: stripe');
    expect(text).toContain(`event key: ${checkout.id}`);
    expect(text).toContain('type: checkout.session.completed');
    expect(text).toContain('effect: send-welcome-email');
    expect(text).toContain('error: 550 mailbox unavailable: [email]');
    expect(text).toContain(`replay: npx webhook-inbox replay stripe ${checkout.id}`);
    expect(text).toMatch(/payload excerpt: \{"id":"evt_/);
    expect(message?.body.blocks?.length).toBeGreaterThan(3);
    // Neither the text nor the blocks carry the customer's email or name.
    const wire = JSON.stringify(message?.body);
    expect(wire).not.toContain(checkout.data.object.customer_details.email);
    expect(wire).not.toContain(checkout.data.object.customer_details.name);
    const excerpt = /payload excerpt: (.*)/.exec(text)?.[1] ?? '';
    expect(excerpt.length).toBeLessThanOrEqual(500);
    console.info(`alert delivered ${elapsed} ms after notify()`);
  });

  it('the alert sink gets the ids of a checkout and an order, never the personal data in their payloads', async () => {
    const hook = await startHook();
    cleanups.push(hook.close);
    const { logger } = collectingLogger();
    // Excerpts long enough that no cut can hide a leak.
    const alerter = track(createAlerter({ url: hook.url, logger, excerptLength: 4000 }));
    const checkout = stripeCheckoutWithPersonalData();
    const order = shopifyOrderWithPersonalData();

    alerter.notify(effectFailed(1, { eventId: checkout.id, payload: checkout }));
    alerter.notify({
      kind: 'event_dead',
      provider: 'shopify',
      eventId: 'acme.myshopify.com:orders/create:1b2c',
      type: 'orders/create',
      error: 'schema: line_items[0].price is not a number',
      payload: order,
    });
    await waitFor(() => hook.received.length === 2, { timeout: 10_000, message: 'both alerts to arrive' });

    const [stripe, shopify] = hook.received.map((r) => r.body.text);
    expect(stripe).toContain(checkout.id);
    expect(stripe).toContain(checkout.data.object.id);
    expect(stripe).toContain(checkout.data.object.customer);
    expect(stripe).toContain('"amount_total":999');
    expect(shopify).toContain('820982911946154508'); // the order id
    expect(shopify).toContain('115310627314723954'); // the customer id
    expect(shopify).toContain('"total_price":"1575.90"');
    // Neither in the text nor in the Slack blocks.
    const wire = JSON.stringify(hook.received.map((r) => r.body));
    for (const value of PERSONAL) expect(wire, value).not.toContain(value);
  });

  it('a dead event whose payload has a 1 MB key and a 1 MB value: its alert goes out at once, bounded', async () => {
    const hook = await startHook();
    cleanups.push(hook.close);
    const { logger } = collectingLogger();
    const alerter = track(createAlerter({ url: hook.url, logger }));
    const MB = 1 << 20;
    const payload = {
      id: 'evt_1Hostile',
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_test_1Hostile', metadata: { ['k'.repeat(MB)]: 'v'.repeat(MB) } } },
    };

    const started = performance.now();
    alerter.notify(effectFailed(1, { eventId: 'evt_1Hostile', payload }));
    // Sent without another notify() or a flush; a walk over the megabyte that blew up would never get here.
    await waitFor(() => hook.received.length === 1, { timeout: 30_000, message: 'the alert to arrive' });
    const elapsed = performance.now() - started;
    const wire = JSON.stringify(hook.received[0]?.body);
    expect(wire).toContain('evt_1Hostile');
    expect(wire.length).toBeLessThan(8000);
    console.info(
      `alert for a payload with a 1 MB key and value delivered ${elapsed.toFixed(0)} ms after notify()`,
    );
  });

  it('100 failures of one fingerprint: the first at once, then ONE summary counting the other 99', async () => {
    const hook = await startHook();
    cleanups.push(hook.close);
    const { logger } = collectingLogger();
    const alerter = track(createAlerter({ url: hook.url, logger, groupWindowMs: 300 }));

    // Event ids and numbers in the message differ: the fingerprint strips them.
    for (let i = 1; i <= 100; i++) alerter.notify(effectFailed(i));
    alerter.notify(effectFailed(1, { effect: 'provision-account' })); // another fingerprint: its own alert

    await waitFor(() => hook.received.length === 3, { timeout: 10_000, message: 'first, other, summary' });
    const stats = await alerter.close();
    expect(hook.received).toHaveLength(3);
    expect(stats).toMatchObject({ notified: 101, grouped: 99, sent: 3, dropped: 0, failed: 0 });

    const texts = hook.received.map((r) => r.body.text);
    expect(texts[0]).toContain('event key: evt_1Test000001Ab');
    expect(texts[1]).toContain('effect: provision-account');
    expect(texts[2]).toContain('… and 99 more like this');
    expect(texts[2]).toContain('(100 in total since');
    // The summary names the latest occurrence and how to find the rest.
    expect(texts[2]).toContain('replay: npx webhook-inbox replay stripe evt_1Test000100Ab');
    // An effect that failed its last retry left its event dead: the list is of dead events.
    expect(texts[2]).toContain('npx webhook-inbox events --provider stripe --status dead --since 1h');
  });

  it('close() sends the summary of a window still open, then later notify() calls are only logged', async () => {
    const hook = await startHook();
    cleanups.push(hook.close);
    const { logger, lines } = collectingLogger();
    const alerter = createAlerter({ url: hook.url, logger, groupWindowMs: 60_000 });
    for (let i = 1; i <= 3; i++) alerter.notify(effectFailed(i));
    await alerter.close();
    expect(hook.received.map((r) => r.body.text.split('\n')[0])).toEqual([
      expect.stringContaining(
        'Effect failed its last retry: stripe checkout.session.completed evt_1Test000001Ab',
      ),
      expect.stringContaining('… and 2 more like this'),
    ]);
    alerter.notify(effectFailed(4));
    expect(lines.at(-1)).toMatchObject({ msg: 'alert after shutdown (not sent)' });
    expect(hook.received).toHaveLength(2);
  });

  it('server down: 1000 notify() calls stay fast and never throw; the alert is retried until it comes back', async () => {
    const port = await freePort();
    const { logger, lines } = collectingLogger();
    const alerter = track(
      createAlerter({
        url: `http://127.0.0.1:${port}/hook`,
        logger,
        maxQueue: 50,
        maxAttempts: 1000,
        retryBaseDelayMs: 10,
        retryMaxDelayMs: 50,
      }),
    );

    const alerts = Array.from({ length: 1000 }, (_, i) => effectFailed(i, { type: `type.${i}` })); // 1000 fingerprints
    const started = performance.now();
    for (const alert of alerts) alerter.notify(alert); // throws nothing: a throw would fail the test here
    const elapsed = performance.now() - started;
    // notify() only buffered them, synchronously (no connection tried yet); the next turn of the event loop
    // groups them and fills the bounded queue.
    expect(alerter.stats()).toMatchObject({ notified: 1000, dropped: 0, retries: 0, sent: 0 });
    await waitFor(() => alerter.stats().dropped === 950, {
      timeout: 5_000,
      message: 'the queue bound applied',
    });

    await waitFor(() => alerter.stats().retries >= 3, {
      timeout: 10_000,
      message: 'refused connections, retried',
    });
    expect(alerter.stats().sent).toBe(0);

    const hook = await startHook({ port });
    cleanups.push(hook.close);
    await waitFor(() => hook.received.length === 50, {
      timeout: 20_000,
      message: 'all queued alerts delivered',
    });
    expect(hook.received[0]?.body.text).toContain('event key: evt_1Test000000Ab');
    expect(hook.received[0]?.body.text).toContain('950 alerts dropped since the last one delivered');
    expect(hook.received[1]?.body.text).not.toContain('dropped');
    expect(lines.some((l) => l.msg === 'alert queue full: dropping alerts')).toBe(true);
    console.info(`1000 notify() with the alert server down: ${elapsed.toFixed(2)} ms`);
  });

  it('server hanging: notify() only buffers, and each POST times out and is retried', async () => {
    const hook = await startHook({ respond: 'hang' });
    cleanups.push(hook.close);
    const { logger } = collectingLogger();
    const alerter = track(
      createAlerter({ url: hook.url, logger, requestTimeoutMs: 100, retryBaseDelayMs: 10, maxAttempts: 3 }),
    );

    const alerts = Array.from({ length: 1000 }, (_, i) => effectFailed(i, { type: `type.${i % 10}` }));
    const started = performance.now();
    for (const alert of alerts) alerter.notify(alert);
    const elapsed = performance.now() - started;
    expect(hook.arrived()).toBe(0);
    expect(alerter.stats()).toMatchObject({ notified: 1000, sent: 0, retries: 0 });

    await waitFor(() => hook.arrived() >= 2, { timeout: 10_000, message: 'a retry after a timed-out POST' });
    expect(alerter.stats().retries).toBeGreaterThanOrEqual(1);
    console.info(`1000 notify() with the alert server hanging: ${elapsed.toFixed(2)} ms`);
  });

  it('server hanging: close() gives up on a POST in flight after its timeout, not the request timeout', async () => {
    const hook = await startHook({ respond: 'hang' });
    cleanups.push(hook.close);
    const { logger } = collectingLogger();
    // A POST would hang for 10 minutes: a close() that waited for it would outlive the test.
    const alerter = createAlerter({ url: hook.url, logger, requestTimeoutMs: 600_000, maxAttempts: 3 });
    for (let i = 0; i < 1000; i++) alerter.notify(effectFailed(i, { type: `type.${i % 10}` }));
    await waitFor(() => hook.arrived() >= 1, { timeout: 10_000, message: 'a POST in flight' });

    const closing = performance.now();
    const stats = await alerter.close({ timeoutMs: 300 });
    const closeMs = performance.now() - closing;
    expect(stats.sent).toBe(0);
    expect(stats.queued).toBe(0);
    // Ten firsts and ten summaries, none delivered: given up on, or abandoned at shutdown.
    expect(stats.failed + stats.dropped).toBe(20);
    console.info(`close() with a POST hanging: ${closeMs.toFixed(0)} ms`);
  });

  it('a 4xx answer is not retried', async () => {
    const hook = await startHook({ respond: 400 });
    cleanups.push(hook.close);
    const { logger } = collectingLogger();
    const alerter = track(createAlerter({ url: hook.url, logger, retryBaseDelayMs: 10 }));
    alerter.notify(effectFailed(1));
    await waitFor(() => alerter.stats().failed === 1, { timeout: 10_000 });
    expect(alerter.stats().retries).toBe(0);
    expect(hook.received).toHaveLength(1);
  });

  it('without a URL, alerts are logged (masked) and nothing is fetched', async () => {
    const { logger, lines } = collectingLogger();
    const fetchSpy: typeof fetch = () => Promise.reject(new Error('must not be called'));
    const alerter = createAlerter({ logger, fetch: fetchSpy });
    alerter.notify({
      kind: 'event_dead',
      provider: 'shopify',
      eventId: 'shop.myshopify.com:orders/create:1b2c',
      type: 'orders/create',
      error: 'handler threw',
      payload: { email: 'jane@example.com', total_price: '10.00' },
    });
    const stats = await alerter.close();
    expect(stats.sent).toBe(1);
    const line = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('alert: '));
    expect(line).toMatchObject({
      level: 50,
      alert: 'event_dead',
      provider: 'shopify',
      type: 'orders/create',
    });
    expect(String(line?.message)).toContain(
      'replay: npx webhook-inbox replay shopify shop.myshopify.com:orders/create:1b2c',
    );
    expect(JSON.stringify(lines)).not.toContain('jane@example.com');
  });

  it('tells onOutcome what became of each message: sent, or failed when the webhook refuses it', async () => {
    const accepting = await startHook();
    const refusing = await startHook({ respond: 400 });
    cleanups.push(accepting.close, refusing.close);
    const { logger } = collectingLogger();
    const outcomes: AlertOutcome[] = [];
    for (const hook of [accepting, refusing]) {
      const alerter = createAlerter({
        url: hook.url,
        logger,
        service: 'test',
        onOutcome: (o) => outcomes.push(o),
      });
      alerter.notify(effectFailed(1));
      await alerter.close();
    }
    expect(outcomes.map((o) => [o.outcome, o.kind, o.effect, o.eventId, o.occurrences, o.service])).toEqual([
      ['sent', 'effect_failed', 'send-welcome-email', 'evt_1Test000001Ab', 1, 'test'],
      ['failed', 'effect_failed', 'send-welcome-email', 'evt_1Test000001Ab', 1, 'test'],
    ]);
    expect(outcomes[0]?.headline).toContain('send-welcome-email');
  });
});
