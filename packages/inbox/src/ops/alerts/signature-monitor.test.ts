import { describe, expect, it } from 'vitest';
import type { Alert } from './model.ts';
import { createSignatureFailureMonitor } from './signature-monitor.ts';

describe('createSignatureFailureMonitor', () => {
  it('alerts once when refusals in the window exceed the threshold, per provider, then again the next window', () => {
    const alerts: Alert[] = [];
    let now = 1_000_000;
    const monitor = createSignatureFailureMonitor({
      alerter: { notify: (alert) => alerts.push(alert) },
      threshold: 5,
      windowMs: 60_000,
      now: () => now,
    });

    for (let i = 0; i < 5; i++) monitor.record('stripe');
    expect(alerts).toHaveLength(0);
    monitor.record('stripe');
    expect(alerts).toEqual([
      { kind: 'signature_failures', provider: 'stripe', count: 6, threshold: 5, windowMs: 60_000 },
    ]);
    for (let i = 0; i < 50; i++) monitor.record('stripe');
    expect(alerts).toHaveLength(1);

    for (let i = 0; i < 6; i++) monitor.record('shopify');
    expect(alerts.map((a) => a.provider)).toEqual(['stripe', 'shopify']);

    // A trickle spread over time never exceeds the threshold within one window.
    now += 120_000;
    for (let i = 0; i < 20; i++) {
      now += 15_000;
      monitor.record('acme');
    }
    expect(alerts).toHaveLength(2);

    // Next window, still failing: one more alert.
    now += 60_000;
    for (let i = 0; i < 6; i++) monitor.record('stripe');
    expect(alerts).toHaveLength(3);
  });

  it('refuses a nonsensical configuration', () => {
    const alerter = { notify: () => {} };
    expect(() => createSignatureFailureMonitor({ alerter, threshold: -1 })).toThrow(/threshold/);
    expect(() => createSignatureFailureMonitor({ alerter, threshold: 1, windowMs: 0 })).toThrow(/windowMs/);
  });
});
