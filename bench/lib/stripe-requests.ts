import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { signStripe } from '@webhook-inbox/providers';
import { httpRequest } from './http-load.ts';

/** The Stripe endpoint secret every benchmarked receiver is started with (`spawnReceiver`). */
export const STRIPE_SECRET = `whsec_bench_${randomBytes(16).toString('hex')}`;

const FIXTURE = fileURLToPath(
  new URL('../../test/fixtures/stripe/checkout.session.completed.json', import.meta.url),
);
// A real Stripe event (3.8 kB, as Stripe sends it), with its id swapped for each new event.
const TEMPLATE = readFileSync(FIXTURE, 'utf8');
const FIXTURE_ID = /"id": "(evt_[A-Za-z0-9]+)"/.exec(TEMPLATE)![1]!;

/** The fixture's body with the event id `id`. */
export const eventBody = (id: string) => TEMPLATE.replace(FIXTURE_ID, id);

/** A whole HTTP/1.1 request delivering `body` to `/webhooks/stripe`, signed with `STRIPE_SECRET`. */
export const signedRequest = (body: string): Buffer =>
  httpRequest(
    '/webhooks/stripe',
    {
      'content-type': 'application/json',
      'stripe-signature': signStripe({ payload: body, secret: STRIPE_SECRET }),
    },
    body,
  );

/**
 * New events' requests, `ahead` of them signed at once (before a slice's clock starts: signing is the provider's
 * work, not the receiver's); past those, the rest are signed as they are asked for.
 */
export function signedAhead(next: () => Buffer, ahead: number): () => Buffer {
  const prepared = Array.from({ length: ahead }, next);
  let i = 0;
  return () => prepared[i++] ?? next();
}

/** An endless source of distinct new events' signed requests, ids `evt_<prefix>_<n>`. */
export function newEventRequests(prefix: string): () => Buffer {
  let n = 0;
  return () => signedRequest(eventBody(`evt_${prefix}_${n++}`));
}
