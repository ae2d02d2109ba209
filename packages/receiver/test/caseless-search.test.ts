import { catalogueDelivery } from '@webhook-inbox/samples';
import { breakGlassSession } from '@webhook-inbox/testing/console';
import { expect, it } from 'vitest';
import { request, useSourcesReceiver, writeSourcesFile } from './sources-fixture.ts';

// A source named for its team (`github-acme`, of type `github`) records its events under that name. GitHub's
// delivery ids are UUIDs, which compare without case: the admin API's and the console's id search must match one
// typed in capitals, as they do for a source named `github`, because the receiver tells them which of its source
// names are of a caseless type.

const ADMIN_TOKEN = 'caseless-search-admin-token-01234';
const SECRET = 'acme-github-secret';

const sources = useSourcesReceiver(() => ({
  WEBHOOK_SOURCES_FILE: writeSourcesFile(
    ['sources:', '  github-acme:', '    type: github', `    secrets: [${SECRET}]`, ''].join('\n'),
  ),
  STANDARD_WEBHOOKS: '',
  ADMIN_TOKEN,
}));

it("finds a renamed GitHub source's event by its delivery id typed in capitals, in the admin API and the console", async () => {
  const { receiver } = sources;
  // GitHub's sample push, signed with the source's own secret.
  const signed = catalogueDelivery('github', { secret: SECRET, type: 'push' })!;
  const answer = await request(receiver.url, '/webhooks/github-acme', {
    body: signed.body,
    headers: signed.headers,
  });
  expect(answer.status).toBe(200);
  const id = signed.key!;
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  const typed = id.slice(0, 13).toUpperCase();

  const api = await fetch(`${receiver.managementUrl}/admin/events?q=${encodeURIComponent(typed)}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(api.status).toBe(200);
  const page = (await api.json()) as { events: Array<{ provider: string; eventId: string }> };
  expect(page.events.map((e) => [e.provider, e.eventId])).toEqual([['github-acme', id]]);

  // The console, signed in with the break-glass token.
  const console = `${receiver.managementUrl}/console`;
  const cookie = await breakGlassSession(console, ADMIN_TOKEN, 'caseless search');
  const events = await fetch(`${console}/events?q=${encodeURIComponent(typed)}`, {
    headers: { cookie, accept: 'text/html' },
  });
  expect(events.status).toBe(200);
  const html = await events.text();
  expect(html).toContain(id);
});
