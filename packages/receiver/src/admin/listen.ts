import { PayloadTooLargeError } from '@webhook-inbox/inbox/errors';
import { GROUP_NAME_RULE, isGroupName } from '@webhook-inbox/inbox/queue';
import { coversGroup } from '@webhook-inbox/operator/access/roles';
import { acknowledge, nextListened, startListener, stopListener } from '@webhook-inbox/operator/listen';
import { MAX_EVENT_FIELD_LENGTH, PROVIDER_NAME } from '@webhook-inbox/providers';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type pg from 'pg';
import { z } from 'zod';
import { requirePermission, type AdminEnv } from './access.ts';
import { firstIssue, text } from './params.ts';
import { AdminError } from '../http/errors.ts';

/** The largest body read: an acknowledgement of `MAX_ACKS` long keys. */
const BODY_LIMIT = 1024 * 1024;
/** Events acknowledged in one request at most; a client acknowledges each batch it was sent (at most 100). */
const MAX_ACKS = 500;
/** A poll waits at most this long for an event: under the proxies' usual minute of idle time. */
const MAX_WAIT_SECONDS = 55;
const DEFAULT_WAIT_SECONDS = 25;
const LISTENER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const START_BODY = z.strictObject({
  group: z
    .string()
    .refine(isGroupName, { message: `not a consumer group name (${GROUP_NAME_RULE})` })
    .optional(),
  types: z.array(text(200)).max(20, { error: 'at most 20 patterns' }).optional(),
  body: z.enum(['envelope', 'raw'], { error: 'must be envelope or raw' }).optional(),
});

const ACK_BODY = z.strictObject({
  events: z
    .array(
      z.strictObject({
        provider: text(MAX_EVENT_FIELD_LENGTH).regex(PROVIDER_NAME, { error: 'not a source name' }),
        key: text(MAX_EVENT_FIELD_LENGTH),
      }),
    )
    .min(1, { error: 'acknowledge at least one event' })
    .max(MAX_ACKS, { error: `at most ${MAX_ACKS} events at once` }),
});

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,3}$/, { error: `must be a whole number from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be from ${min} to ${max}` })
        .max(max, { error: `must be from ${min} to ${max}` }),
    );

const POLL_QUERY = z.strictObject({
  wait: wholeNumber(0, MAX_WAIT_SECONDS).optional(),
  limit: wholeNumber(1, 100).optional(),
});

/**
 * `/admin/listeners`: `webhook-inbox listen`'s API (docs/http.md#listeners), for a principal that may read payloads
 * (`read_payload`), limited to the event types of its consumer groups. `POST` starts a listener (201, audited);
 * `GET /:id/events?wait=25&limit=20` answers its next events not acknowledged, waiting up to `wait` seconds for
 * one (a long poll); `POST /:id/acks {"events":[{"provider","key"}]}` acknowledges forwarded ones; `DELETE /:id`
 * stops it (audited). A listener is its creator's alone: another principal's id answers 404 `unknown_listener`.
 *
 * @example
 * curl -X POST -H "authorization: Bearer $TOKEN" -d '{"types":["invoice.*"]}' http://127.0.0.1:3002/admin/listeners
 */
export function listenRoutes(pool: pg.Pool): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();
  const limit = bodyLimit({
    maxSize: BODY_LIMIT,
    onError: () => {
      throw new PayloadTooLargeError(BODY_LIMIT);
    },
  });

  routes.post('/', limit, async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read_payload');
    const options = parse(START_BODY, await jsonBody(c, '{"group","types","body"} (each optional)'), 'body');
    if (options.group !== undefined && !coversGroup(principal, options.group)) {
      throw new AdminError(
        'forbidden',
        `you are limited to consumer groups ${principal.groups?.join(', ')}: not "${options.group}"`,
      );
    }
    const listener = await startListener(pool, principal, {
      groups: options.group === undefined ? principal.groups : [options.group],
      types: options.types ?? [],
      body: options.body ?? 'envelope',
    });
    const { actor: _, ...shown } = listener;
    return c.json(shown, 201);
  });

  routes.get('/:id/events', async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read_payload');
    const query = parse(POLL_QUERY, c.req.query(), 'query');
    const events = await nextListened(pool, principal, listenerId(c), {
      limit: query.limit ?? 20,
      waitMs: (query.wait ?? DEFAULT_WAIT_SECONDS) * 1000,
      signal: c.req.raw.signal,
    });
    return c.json({ events });
  });

  routes.post('/:id/acks', limit, async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read_payload');
    const { events } = parse(ACK_BODY, await jsonBody(c, '{"events":[{"provider","key"}]}'), 'body');
    const pairs = events.map(({ provider, key }) => [provider, key] as const);
    return c.json({ acknowledged: await acknowledge(pool, principal, listenerId(c), pairs) });
  });

  routes.delete('/:id', async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read_payload');
    await stopListener(pool, principal, listenerId(c));
    return c.json({ stopped: true });
  });

  return routes;
}

function listenerId(c: Context<AdminEnv>): string {
  const id = c.req.param('id') ?? '';
  if (!LISTENER_ID.test(id)) throw new AdminError('invalid_request', 'not a listener id (a UUID)');
  return id;
}

async function jsonBody(c: Context<AdminEnv>, shape: string): Promise<unknown> {
  const raw = await c.req.text();
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new AdminError('invalid_request', `the body is not JSON; send ${shape}`);
  }
}

function parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new AdminError('invalid_request', `${where}: ${firstIssue(parsed.error)}`);
}
