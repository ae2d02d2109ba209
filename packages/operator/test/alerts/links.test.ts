import { describe, expect, it } from 'vitest';
import { consoleLinks } from '../../src/alerts/links.ts';
import { normalizeErrorMessage } from '../../src/alerts/model.ts';
import { formatAlert } from '../../src/alerts/slack.ts';

// Alerts link to the console (CONSOLE_PUBLIC_URL): the event's page and its failure group's, keyed as the failures
// page keys a group (its consumer group, effect and normalized error); no setting, no link.

const CONSOLE = 'https://inbox.example.com/console';
const failed = {
  kind: 'effect_failed' as const,
  provider: 'shopify',
  eventId: 'acme.myshopify.com:orders/create:123',
  type: 'orders/create',
  effect: 'syncLedger',
  group: 'billing',
  error: new Error('ledger cus_IaTagvBaGokTj locked'),
};

describe('alert links', () => {
  it("link to the event and to its failure group, the group's key in the query", () => {
    const links = consoleLinks(failed, CONSOLE);
    expect(links.map((l) => l.label)).toEqual(['Event', 'Failure group']);
    const event = new URL(links[0]!.url);
    expect(`${event.origin}${event.pathname}`).toBe(`${CONSOLE}/event`);
    expect(Object.fromEntries(event.searchParams)).toEqual({ provider: 'shopify', id: failed.eventId });
    const group = new URL(links[1]!.url);
    expect(`${group.origin}${group.pathname}`).toBe(`${CONSOLE}/failures/group`);
    expect(Object.fromEntries(group.searchParams)).toEqual({
      group: 'billing',
      effect: 'syncLedger',
      fingerprint: normalizeErrorMessage('ledger cus_IaTagvBaGokTj locked'),
    });
  });

  it('the default group when the alert names none; no group link without an effect, no link for signatures', () => {
    const { group: _group, ...inDefault } = failed;
    expect(new URL(consoleLinks(inDefault, CONSOLE)[1]!.url).searchParams.get('group')).toBe('default');
    const { effect: _effect, ...dead } = { ...failed, kind: 'event_dead' as const };
    expect(consoleLinks(dead, CONSOLE).map((l) => l.label)).toEqual(['Event']);
    const signatures = {
      kind: 'signature_failures' as const,
      provider: 'stripe',
      count: 30,
      threshold: 20,
      windowMs: 60_000,
      since: new Date(0),
      complete: true,
    };
    expect(consoleLinks(signatures, CONSOLE)).toEqual([]);
  });

  it('are in the message with the setting, and absent without it', () => {
    const linked = formatAlert(failed, { consoleUrl: CONSOLE });
    const [event, group] = consoleLinks(failed, CONSOLE);
    expect(linked.plain).toContain(`event: ${event!.url}`);
    expect(linked.plain).toContain(`failure group: ${group!.url}`);
    expect(JSON.stringify(linked.blocks)).toContain(`<${group!.url}|Failure group>`);
    const bare = formatAlert(failed);
    expect(bare.plain).not.toContain(CONSOLE);
    expect(JSON.stringify(bare.blocks)).not.toContain('Failure group');
  });
});
