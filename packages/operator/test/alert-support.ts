// What the alert tests share: a fake Slack webhook on 127.0.0.1, an alert, and payloads full of personal data.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseJsonLossless } from '@webhook-inbox/inbox';
import type { Alert } from '../src/alerts/model.ts';
import type { AlertMessage } from '../src/alerts/slack.ts';

export interface Received {
  method: string | undefined;
  contentType: string | undefined;
  body: AlertMessage;
}

/** A fake Slack incoming webhook on 127.0.0.1: answers 200, a given status, or never (`hang`). */
export async function startHook(options: { port?: number; respond?: number | 'hang' } = {}) {
  const received: Received[] = [];
  let arrived = 0;
  const server = http.createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (data += chunk));
    req.on('end', () => {
      arrived++;
      if (options.respond === 'hang') return;
      received.push({
        method: req.method,
        contentType: req.headers['content-type'],
        body: JSON.parse(data) as AlertMessage,
      });
      res.writeHead(typeof options.respond === 'number' ? options.respond : 200).end('ok');
    });
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/services/T000/B000/XXXX`,
    received,
    arrived: () => arrived,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (connection refused). */
export async function freePort(): Promise<number> {
  const hook = await startHook();
  await hook.close();
  return hook.port;
}

function fixture(name: string): Record<string, unknown> {
  const url = new URL(`../../../test/fixtures/${name}`, import.meta.url);
  // As the worker reads payloads: ids beyond 2^53 (Shopify's) stay exact, as bigints.
  return parseJsonLossless(readFileSync(url, 'utf8')) as Record<string, unknown>;
}

/** Personal data the payloads below carry, none of which may reach an alert. */
export const PERSONAL = [
  'X12345678', // passport number
  '221B Baker Street',
  'NW1 6XE',
  '1984-02-29', // date of birth
  'Ada Lovelace',
  'ada@example.org',
  '123 Shipping Street',
  'Shippington',
  'Steve',
  'jon@example.com',
  'john@example.com',
  'Leave it with',
  'Smith',
];

/** A real `checkout.session.completed` whose custom fields ask for a passport number and a home address. */
export function stripeCheckoutWithPersonalData() {
  const event = fixture('stripe/checkout.session.completed.json') as {
    id: string;
    data: { object: Record<string, unknown> & { id: string; customer: string } };
  };
  const session = event.data.object;
  session.custom_fields = [
    {
      key: 'passport',
      label: { type: 'custom', custom: 'Passport number' },
      type: 'text',
      optional: false,
      text: { value: 'X12345678' },
    },
    {
      key: 'home_address',
      label: { type: 'custom', custom: 'Home address' },
      type: 'text',
      optional: false,
      text: { value: '221B Baker Street, London NW1 6XE' },
    },
  ];
  session.customer_details = {
    email: 'ada@example.org',
    name: 'Ada Lovelace',
    address: { line1: '221B Baker Street', city: 'London', postal_code: 'NW1 6XE', country: 'GB' },
  };
  session.metadata = { date_of_birth: '1984-02-29', note: 'passport X12345678' };
  return event;
}

/** A real Shopify `orders/create` with the customer's addresses and a note naming who collects the parcel. */
export function shopifyOrderWithPersonalData() {
  const order = fixture('shopify/orders_create.json') as Record<string, unknown> & {
    customer: Record<string, unknown>;
  };
  order.note = 'Leave it with Ada Lovelace at 221B Baker Street, passport X12345678, born 1984-02-29';
  order.customer.default_address = { address1: '221B Baker Street', zip: 'NW1 6XE', city: 'London' };
  return order;
}

/** An `effect_failed` alert whose ids and numbers vary with `i` while its fingerprint does not. */
export function effectFailed(
  i: number,
  overrides: Partial<Extract<Alert, { kind: 'effect_failed' }>> = {},
): Alert {
  return {
    kind: 'effect_failed',
    provider: 'stripe',
    eventId: `evt_1Test${String(i).padStart(6, '0')}Ab`,
    type: 'checkout.session.completed',
    effect: 'send-welcome-email',
    error: new Error(`SMTP 421 for evt_1Test${i}Ab: try again in ${i} s`),
    attempts: 9,
    ...overrides,
  };
}
