import { z } from 'zod';
import { InvalidPayloadError } from './errors.ts';

/**
 * What binds a Shopify delivery's unsigned headers to its signed body. Shopify signs only the body, so one signed
 * body could be sent again under another topic and another shop's `X-Shopify-Shop-Domain`. For each topic whose
 * effects act on a shop, the body must be of that topic's kind, and the shop it names must be the header's.
 *
 * The schemas check only what tells the topics apart and the field naming the shop; every other field is left to
 * the effects, and unknown fields are allowed (Shopify adds fields). Shapes from Shopify's sample payloads:
 * - `orders/create`: an Order; `id` required. Its `admin_graphql_api_id`, when present, is an Order GID (another
 *   resource's body has its own); it has no `myshopify_domain` (a Shop object has an `id` too). An order does not
 *   name its shop.
 * - `app/uninstalled`: the Shop object; `myshopify_domain` required and equal to the header. `domain` is the
 *   shop's primary domain, often a custom one (`www.example.com`), so it is not compared; `id` is optional here.
 * - `customers/data_request`, `customers/redact`, `shop/redact`: `shop_domain` required and equal to the header;
 *   `shop_id` optional (the headers carry no shop id to compare it with). `customers/*` carry a `customer` object;
 *   `customers/redact` carries `orders_to_redact` and `customers/data_request` does not; `shop/redact` carries
 *   neither a customer nor order lists.
 * Any other topic is recorded without a payload check: no effect of this repository trusts it.
 */

/** An id as `JSON.parse` reads it: beyond 2^53 it is rounded, but still an integer. */
const id = z.number().refine(Number.isInteger, { error: 'is not an integer' });
const domain = z.string().min(1);
/** A key that marks another topic's payload. */
const absent = z.never({ error: "belongs to another topic's payload" }).optional();

const customer = z.object({ id: id.nullish() });
const shopId = z.union([id, z.string().regex(/^\d+$/)]).nullish();

const order = z.object({
  id,
  admin_graphql_api_id: z
    .string()
    .regex(/^gid:\/\/shopify\/Order\/\d+$/, { error: 'is not an Order GID' })
    .nullish(),
  myshopify_domain: absent,
});

interface TopicPayload {
  schema: z.ZodType;
  /** The field that names the shop; it must equal `X-Shopify-Shop-Domain`. */
  shopField?: 'shop_domain' | 'myshopify_domain';
}

const TOPICS: ReadonlyMap<string, TopicPayload> = new Map<string, TopicPayload>([
  ['orders/create', { schema: order }],
  [
    'app/uninstalled',
    { schema: z.object({ id: id.nullish(), myshopify_domain: domain }), shopField: 'myshopify_domain' },
  ],
  [
    'customers/data_request',
    {
      schema: z.object({
        shop_id: shopId,
        shop_domain: domain,
        customer,
        orders_requested: z.array(id).nullish(),
        data_request: z.object({ id }).nullish(),
        orders_to_redact: absent,
      }),
      shopField: 'shop_domain',
    },
  ],
  [
    'customers/redact',
    {
      schema: z.object({
        shop_id: shopId,
        shop_domain: domain,
        customer,
        orders_to_redact: z.array(id),
        orders_requested: absent,
        data_request: absent,
      }),
      shopField: 'shop_domain',
    },
  ],
  [
    'shop/redact',
    {
      schema: z.object({
        shop_id: shopId,
        shop_domain: domain,
        customer: absent,
        orders_to_redact: absent,
        orders_requested: absent,
      }),
      shopField: 'shop_domain',
    },
  ],
]);

/** The topics whose payload is checked at ingest. */
export const SHOPIFY_CHECKED_TOPICS: readonly string[] = [...TOPICS.keys()];

/**
 * Refuses a verified body that is not a `topic` payload, or that names another shop than `shopDomain` (the
 * `X-Shopify-Shop-Domain` header), with `invalid_payload`. Messages name fields, never their values.
 */
export function checkShopifyPayload(topic: string, shopDomain: string, body: Record<string, unknown>): void {
  const expected = TOPICS.get(topic);
  if (expected === undefined) return;
  const result = expected.schema.safeParse(body);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`);
    throw new InvalidPayloadError(
      `shopify: the body is not a payload of the ${topic} topic: ${issues.join('; ')}`,
    );
  }
  const field = expected.shopField;
  if (field !== undefined && body[field] !== shopDomain) {
    throw new InvalidPayloadError(
      `shopify: the body's ${field} names another shop than the X-Shopify-Shop-Domain header ` +
        '(Shopify signs the body only: the shop a webhook acts on must be the one its body names)',
    );
  }
}
