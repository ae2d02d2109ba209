import { waitFor } from '@webhook-inbox/testing';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startHook } from '../alert-support.ts';
import { createAlerter } from '../../src/alerts/delivery.ts';
import { alertProvider, type Alert } from '../../src/alerts/model.ts';
import { createSignatureFailureMonitor } from '../../src/alerts/signature-monitor.ts';

function collect() {
  const alerts: Alert[] = [];
  return { alerts, alerter: { notify: (alert: Alert) => void alerts.push(alert) } };
}

describe('createSignatureFailureMonitor', () => {
  const start = 1_000_000;
  beforeEach(() => vi.useFakeTimers({ now: start }));
  afterEach(() => vi.useRealTimers());

  it('alerts as a window passes the threshold and gives its total when it closes, per provider', () => {
    const { alerts, alerter } = collect();
    const monitor = createSignatureFailureMonitor({ alerter, threshold: 5, windowMs: 60_000 });

    for (let i = 0; i < 5; i++) monitor.record('stripe');
    expect(alerts).toHaveLength(0);
    monitor.record('stripe');
    expect(alerts).toEqual([
      {
        kind: 'signature_failures',
        provider: 'stripe',
        count: 6,
        threshold: 5,
        windowMs: 60_000,
        since: new Date(start),
        complete: false,
      },
    ]);
    for (let i = 0; i < 50; i++) monitor.record('stripe');
    expect(alerts).toHaveLength(1);

    for (let i = 0; i < 6; i++) monitor.record('shopify');
    expect(alerts.map(alertProvider)).toEqual(['stripe', 'shopify']);

    // The windows close: Stripe's total is 56; Shopify's is what was already reported, so nothing more.
    vi.advanceTimersByTime(60_000);
    expect(alerts).toHaveLength(3);
    expect(alerts[2]).toMatchObject({
      provider: 'stripe',
      count: 56,
      complete: true,
      since: new Date(start),
    });

    // A trickle spread over time never passes the threshold within one window.
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(15_000);
      monitor.record('acme');
    }
    expect(alerts).toHaveLength(3);

    // Another window, still failing: one more alert.
    for (let i = 0; i < 6; i++) monitor.record('stripe');
    expect(alerts).toHaveLength(4);
    expect(alerts[3]).toMatchObject({ provider: 'stripe', count: 6, complete: false });
  });

  it('100,000 refusals in one window are reported as 100,000, not as the threshold', () => {
    const { alerts, alerter } = collect();
    const monitor = createSignatureFailureMonitor({ alerter, threshold: 20, windowMs: 60_000 });
    for (let i = 0; i < 100_000; i++) monitor.record('stripe');
    expect(alerts).toMatchObject([{ count: 21, complete: false }]);
    vi.advanceTimersByTime(60_000);
    expect(alerts).toMatchObject([
      { count: 21, complete: false },
      { count: 100_000, complete: true },
    ]);
  });

  it('close() gives the total of a window still open, and stops its timer', () => {
    const { alerts, alerter } = collect();
    const monitor = createSignatureFailureMonitor({ alerter, threshold: 1, windowMs: 60_000 });
    for (let i = 0; i < 10; i++) monitor.record('stripe');
    monitor.close();
    expect(alerts).toMatchObject([
      { count: 2, complete: false },
      { count: 10, complete: true },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('refuses a nonsensical configuration', () => {
    const { alerter } = collect();
    expect(() => createSignatureFailureMonitor({ alerter, threshold: -1 })).toThrow(/threshold/);
    expect(() => createSignatureFailureMonitor({ alerter, threshold: 1, windowMs: 0 })).toThrow(/windowMs/);
  });
});

describe('signature failures at the alert sink', () => {
  it('a burst far above the threshold reaches the sink with its true count', async () => {
    const hook = await startHook();
    const alerter = createAlerter({ url: hook.url, logger: pino({ level: 'silent' }), groupWindowMs: 200 });
    const monitor = createSignatureFailureMonitor({ alerter, threshold: 20, windowMs: 200 });
    try {
      // The burst lands in one window whatever the machine's speed: the clock stands still while it is recorded
      // (a loaded machine can take longer than the window to run the loop). The window's timer is real.
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        for (let i = 0; i < 100_000; i++) monitor.record('stripe');
      } finally {
        vi.useRealTimers();
      }
      await waitFor(() => hook.received.some((r) => r.body.text.includes('refused: 100000')), {
        timeout: 60_000,
        message: 'the total of the window',
      });
      const texts = hook.received.map((r) => r.body.text);
      expect(texts[0]).toContain('stripe: 21 refused signatures so far within 200 ms (threshold 20)');
      expect(texts.at(-1)).toContain('stripe: 100000 refused signatures in 200 ms (threshold 20)');
    } finally {
      monitor.close();
      await alerter.close({ timeoutMs: 200 });
      await hook.close();
    }
  });
});
