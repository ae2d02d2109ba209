import { createHmac, randomUUID } from 'node:crypto';
import {
  CATALOGUE,
  createProviders,
  signShopify,
  signStandardWebhook,
  signStripe,
  type Provider,
  type SignedRequest,
} from '@webhook-inbox/providers';
import { catalogueDelivery, catalogueSampleType } from '@webhook-inbox/samples';
import { sampleCredentials } from '@webhook-inbox/testing';
import type { BenchContext } from './lib/context.ts';
import { eventBody } from './lib/stripe-requests.ts';
import { fixed, type BenchTable } from './lib/table.ts';

// The CPU one verification costs, per provider: each catalogue entry's, plus Stripe's, Shopify's and Standard
// Webhooks', timed in this process over N requests signed beforehand, next to a bare HMAC-SHA256 (hex) of each
// request's same body, the floor any HMAC scheme pays. No database, no HTTP: only `verify` (or `receive`).

const REQUESTS = Number(process.env.BENCH_VERIFY_REQUESTS ?? 20_000);
const WARMUP = 1_000;
const CERTIFICATE_REQUESTS = 2_000;
const SW_SECRET = `whsec_${Buffer.from('bench-standard-webhooks-key-32b!').toString('base64')}`;

interface Case {
  name: string;
  provider: Provider;
  /** Fewer requests than REQUESTS, for providers whose signing (RSA) makes preparing each one slow. */
  requests?: number;
  /** A fresh signed request and its body. */
  next(now: Date): { body: string; headers: Record<string, string> };
}

function catalogueCases(): Case[] {
  return CATALOGUE.flatMap((entry): Case[] => {
    const sampleType = catalogueSampleType(entry.type);
    if (sampleType === undefined) return [];
    const credentials = sampleCredentials(entry);
    const secret = credentials.secret;
    const url = entry.facts.requiredOptions.includes('url')
      ? `https://hooks.example.com/webhooks/${entry.type}`
      : undefined;
    const verifyToken = entry.facts.requiredOptions.includes('verifyToken')
      ? 'bench-verify-token'
      : undefined;
    const source = {
      name: entry.type,
      type: entry.type,
      secrets: [secret],
      secretFiles: [],
      url,
      verifyToken,
    };
    // The certificate-based providers get their sample certificate from memory: no request, as from their cache.
    const certificate = credentials.certificate;
    const certificateFetch =
      certificate === undefined ? undefined : () => Promise.resolve(new Response(certificate));
    const provider = createProviders({ sources: [source], toleranceSeconds: 300, certificateFetch }).get(
      entry.type,
    )!;
    return [
      {
        name: entry.type,
        provider,
        requests: certificate === undefined ? undefined : Math.min(REQUESTS, CERTIFICATE_REQUESTS),
        next: (now) => catalogueDelivery(entry.type, { ...credentials, url, type: sampleType, now })!,
      },
    ];
  });
}

function builtinCases(): Case[] {
  const providers = createProviders({
    stripeSecrets: ['whsec_bench_stripe'],
    shopifySecrets: ['shpss_bench'],
    standardWebhooks: [{ name: 'standard-webhooks', secrets: [SW_SECRET] }],
    toleranceSeconds: 300,
  });
  return [
    {
      name: 'stripe',
      provider: providers.get('stripe')!,
      next(now) {
        const body = eventBody(`evt_${randomUUID().replaceAll('-', '')}`);
        const timestamp = Math.floor(now.getTime() / 1000);
        return {
          body,
          headers: {
            'stripe-signature': signStripe({ payload: body, secret: 'whsec_bench_stripe', timestamp }),
          },
        };
      },
    },
    {
      name: 'shopify',
      provider: providers.get('shopify')!,
      next(now) {
        const body = JSON.stringify({
          id: 820982911946154500,
          email: 'jon@example.com',
          total_price: '403.00',
        });
        return {
          body,
          headers: {
            'x-shopify-hmac-sha256': signShopify({ payload: body, secret: 'shpss_bench' }),
            'x-shopify-topic': 'orders/create',
            'x-shopify-shop-domain': 'bench.myshopify.com',
            'x-shopify-event-id': randomUUID(),
            'x-shopify-webhook-id': randomUUID(),
            'x-shopify-triggered-at': now.toISOString(),
            'x-shopify-api-version': '2026-07',
          },
        };
      },
    },
    {
      name: 'standard-webhooks',
      provider: providers.get('standard-webhooks')!,
      next(now) {
        const id = `msg_${randomUUID()}`;
        const timestamp = Math.floor(now.getTime() / 1000);
        const body = JSON.stringify({ type: 'invoice.paid', data: { id: 'in_1', amount: 1200 } });
        return {
          body,
          headers: {
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signStandardWebhook({ id, timestamp, payload: body, secret: SW_SECRET }),
          },
        };
      },
    },
  ];
}

function asRequest({ body, headers }: { body: string; headers: Record<string, string> }): SignedRequest {
  const lookup = new Headers(headers);
  return { rawBody: Buffer.from(body, 'utf8'), header: (name) => lookup.get(name) };
}

/** Microseconds per awaited call of `run` over the prepared inputs, one at a time, after a warm-up. */
async function timePerAsync<T>(inputs: readonly T[], run: (input: T) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await run(inputs[i % inputs.length]!);
  const start = process.hrtime.bigint();
  for (const input of inputs) await run(input);
  return Number(process.hrtime.bigint() - start) / 1_000 / inputs.length;
}

/** Microseconds per call of `run` over the prepared inputs, after a warm-up on the first ones. */
function timePer<T>(inputs: readonly T[], run: (input: T) => unknown): number {
  for (let i = 0; i < WARMUP; i++) run(inputs[i % inputs.length]!);
  const start = process.hrtime.bigint();
  for (const input of inputs) run(input);
  return Number(process.hrtime.bigint() - start) / 1_000 / inputs.length;
}

export async function verifyBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const now = new Date();
  const cases = [...builtinCases(), ...catalogueCases()];
  ctx.log(`verify: ${cases.length} providers, ${REQUESTS} signed requests each`);
  const baselineKey = 'bench-baseline-secret';
  const rows = [];
  for (const c of cases) {
    const requests = Array.from({ length: c.requests ?? REQUESTS }, () => asRequest(c.next(now)));
    const { provider } = c;
    const micros = provider.receiveAsync
      ? await timePerAsync(requests, (request) => provider.receiveAsync!(request, now))
      : timePer(
          requests,
          provider.receive
            ? (request: SignedRequest) => provider.receive!(request, now)
            : (request: SignedRequest) => provider.verify(request, now),
        );
    const bare = timePer(requests, (request) =>
      createHmac('sha256', baselineKey).update(request.rawBody).digest('hex'),
    );
    rows.push({
      provider: c.name,
      'body bytes': requests[0]!.rawBody.length,
      'µs/verify': fixed(micros, 2),
      'bare HMAC µs': fixed(bare, 2),
      'x bare HMAC': fixed(micros / bare, 1),
    });
  }
  return {
    title: 'Signature verification per provider (CPU, one process)',
    columns: ['provider', 'body bytes', 'µs/verify', 'bare HMAC µs', 'x bare HMAC'],
    rows,
    notes: [
      `${REQUESTS} requests per provider (BENCH_VERIFY_REQUESTS), signed beforehand, ${WARMUP} warm-up calls`,
      "µs/verify: the provider's verify (receive for batch providers): signature, timestamp, JSON parse, key and type",
      'bare HMAC: createHmac(sha256) of the same body, hex, in the same run: the floor of any HMAC scheme',
      `aws-sns, paypal: receiveAsync awaited one at a time, certificate cached (RSA 2048), ${CERTIFICATE_REQUESTS} requests`,
    ],
  };
}
