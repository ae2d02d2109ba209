import { readFileSync } from 'node:fs';
import type { CliContext } from '../context.ts';
import { signedShopifySample, signedStripeSample, sourceSample } from '../source-samples.ts';
import { UsageError } from '../errors.ts';
import { printJson } from '../output.ts';
import {
  shopifySample,
  stripeSample,
  type ShopifySampleOptions,
  type StripeSampleOptions,
} from '../samples.ts';

export interface SendOptions {
  times: number;
  /** A JSON file sent as the body instead of the sample (catalogue sources). */
  payload?: string;
  json: boolean;
  url?: string;
  /** A PEM private key, for a source verified with the public half (`--private-key`). */
  privateKey?: string;
  /** The certificate URL an AWS SNS or PayPal message names (`--certificate-url`). */
  certificateUrl?: string;
}

interface Delivery {
  status: number;
  body: unknown;
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<Delivery> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
  } catch (error) {
    throw new Error(`cannot reach the receiver at ${url} (is \`pnpm start\` running?)`, { cause: error });
  }
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON; show as text
  }
  return { status: response.status, body: parsed };
}

/** Signs with the first configured secret (the current one during a rotation). */
function firstSecret(secrets: string[], variable: string): string {
  const secret = secrets[0];
  if (!secret)
    throw new UsageError(`${variable} is not set and no dev secret was found in .data/dev-secrets.json`);
  return secret;
}

async function deliver(
  context: CliContext,
  provider: string,
  options: SendOptions,
  request: () => { body: string; headers: Record<string, string>; id: string; query?: string },
): Promise<boolean> {
  const { body, headers, id, query = '' } = request();
  const url = `${options.url ?? context.receiverUrl()}/webhooks/${provider}${query}`;
  const deliveries: Delivery[] = [];
  // The same signed event, `times` times: what a provider's redelivery looks like.
  for (let i = 0; i < options.times; i++) deliveries.push(await post(url, body, headers));
  if (options.json) printJson({ url, eventId: id, deliveries });
  else
    for (const d of deliveries)
      process.stdout.write(`POST ${url} ${id} -> ${d.status} ${JSON.stringify(d.body)}\n`);
  return deliveries.every((d) => d.status >= 200 && d.status < 300);
}

export function sendStripe(
  context: CliContext,
  type: string,
  sample: StripeSampleOptions,
  options: SendOptions,
): Promise<boolean> {
  const secret = firstSecret(context.stripeSecrets(), 'STRIPE_WEBHOOK_SECRET');
  const body =
    options.payload === undefined ? stripeSample(type, sample) : stripePayload(options.payload, type);
  return deliver(context, 'stripe', options, () => signedStripeSample(body, secret));
}

export function sendShopify(
  context: CliContext,
  topic: string,
  sample: ShopifySampleOptions,
  options: SendOptions,
): Promise<boolean> {
  const secret = firstSecret(context.shopifySecrets(), 'SHOPIFY_WEBHOOK_SECRET');
  return deliver(context, 'shopify', options, () => {
    const event =
      options.payload === undefined
        ? shopifySample(topic, sample)
        : {
            body: readPayload(options.payload),
            topic,
            shop: sample.shop ?? 'dev-shop.myshopify.com',
            eventId: sample.eventId ?? crypto.randomUUID(),
          };
    const delivery = signedShopifySample(event, secret);
    return {
      ...delivery,
      headers: {
        ...delivery.headers,
        'x-shopify-webhook-id': crypto.randomUUID(),
        'x-shopify-triggered-at': new Date().toISOString(),
        'x-shopify-api-version': '2026-07',
      },
    };
  });
}

/**
 * Any configured source by name (`WEBHOOK_SOURCES_FILE`, `STANDARD_WEBHOOKS`): a sample event of `type`, signed
 * or authenticated with the source's first secret as its sender would, posted to `/webhooks/<name>`.
 */
export async function sendSource(
  context: CliContext,
  name: string,
  type: string,
  options: SendOptions,
): Promise<boolean> {
  const sources = await context.sources();
  const source = sources.find((candidate) => candidate.name === name);
  if (!source) {
    const known = ['stripe', 'shopify', ...sources.map((candidate) => candidate.name)].join(', ');
    throw new UsageError(
      `no source named "${name}" is configured (known: ${known}); is WEBHOOK_SOURCES_FILE set?`,
    );
  }
  const payload = options.payload === undefined ? undefined : readPayload(options.payload);
  return deliver(context, name, options, () => sourceSample(source, type, payload, options));
}

/**
 * `--payload <file>` for Stripe: any event type a team registered, its bytes signed as they are. The file is a
 * Stripe event (an `id`, and the `type` given), so the receiver keys it as Stripe would.
 */
function stripePayload(file: string, type: string): string {
  const body = readPayload(file);
  let event: { id?: unknown; type?: unknown };
  try {
    event = JSON.parse(body) as typeof event;
  } catch {
    throw new UsageError(`--payload: ${file} is not JSON`);
  }
  if (typeof event.id !== 'string')
    throw new UsageError(`--payload: ${file} has no "id" (a Stripe event id)`);
  if (event.type !== type) {
    throw new UsageError(`--payload: ${file} is a "${String(event.type)}" event, not "${type}"`);
  }
  return body;
}

/** The bytes of `--payload <file>`, exactly as they are in the file (they are what gets signed). */
function readPayload(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--payload: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}
