import { auditLog } from '@webhook-inbox/operator/sql';
import { Hono } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import { requirePermission, type AdminEnv } from './access.ts';
import { requireGroup } from './groups.ts';
import { firstIssue, groupName, optional, pageLimit, text } from './params.ts';
import { AdminError } from '../http/errors.ts';

/** The longest filter value taken: longer than any actor, action or target the inbox writes. */
const MAX_FILTER_LENGTH = 1200;

const AUDIT_QUERY = z.strictObject({
  actor: optional(text(MAX_FILTER_LENGTH)),
  action: optional(text(MAX_FILTER_LENGTH)),
  target: optional(text(MAX_FILTER_LENGTH)),
  group: optional(groupName),
  before: optional(
    z
      .string()
      .regex(/^[1-9]\d{0,15}$/, { error: 'must be a row id' })
      .transform(Number),
  ),
  limit: optional(pageLimit),
});

/**
 * `GET /admin/audit?actor=&action=&target=&group=&before=&limit=`: the audit log, newest first, as the console's
 * page reads it (each filter an exact match; `before`: the `next` of the page before). A row's group is that of
 * what it acted on (`audit_log.consumer_group`); a token limited to groups reads only its groups' rows (never a
 * row of no group: a sign-in, a purge, a token change), a `group` narrows to one (403 `forbidden` outside the
 * token's). Needs `read`; a bad parameter is 400 `invalid_filter`.
 */
export function auditRoutes(pool: pg.Pool): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();
  routes.get('/', async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read');
    const query = AUDIT_QUERY.safeParse(c.req.query());
    if (!query.success) throw new AdminError('invalid_filter', firstIssue(query.error));
    const { group, before, limit = 100, ...filter } = query.data;
    if (group !== undefined) requireGroup(principal, group);
    const groups = group !== undefined ? [group] : (principal.groups ?? undefined);
    const { rows } = await pool.query<auditLog.AuditRow>(
      auditLog.listAudit(limit + 1, { ...filter, groups }, before),
    );
    const entries = rows.slice(0, limit);
    return c.json({ entries, next: rows.length > limit ? (entries.at(-1)?.id ?? null) : null });
  });
  return routes;
}
