import { Params, type Statement } from '@webhook-inbox/inbox/sql';
import type { Role } from './api-tokens.ts';

/** How a principal proved who it is; recorded in the audit log. */
export type AuthMethod =
  /** A console session from the company's identity provider (OpenID Connect). */
  | 'oidc'
  /** The `ADMIN_TOKEN`: the documented break-glass sign-in, always `admin`. */
  | 'break_glass'
  /** A scoped API token (admin API, remote CLI). */
  | 'api_token'
  /** The CLI run against the database directly: the OS user and host. */
  | 'local_cli'
  /** A scheduled job of the inbox itself (retention, reconcile). */
  | 'system';

/**
 * Statements on `audit_log`: every state change from every surface (console, admin API, CLI, scheduled jobs), and
 * the console's sign-ins. The table is append-only (migration 0009's trigger): rows are inserted, read, and
 * removed only by `audit_log_purge` once older than 90 days.
 */

/**
 * Who a row names: a `Principal`, or for a refused sign-in only what was presented and where from (no role, no
 * method: no one was signed in).
 */
export interface AuditActor {
  actor: string;
  address: string | null;
  role?: Role;
  method?: AuthMethod;
}

/** What was done, to what, with which parameters. */
export interface AuditAction {
  action: string;
  target: string | null;
  details?: Record<string, unknown>;
  /**
   * The consumer group of what was acted on (a replay's, a bulk replay's, a failure group's); absent for what
   * belongs to no one group (a sign-in, a purge, a token). A principal limited to groups reads only its groups' rows.
   */
  group?: string | undefined;
}

/** Run it on the change's own connection, inside its transaction, so the change and its row commit together. */
export function insertAudit(who: AuditActor, entry: AuditAction): Statement {
  return {
    text: `insert into audit_log (actor, role, auth_method, action, target, details, remote_address, consumer_group)
           values ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) returning id`,
    values: [
      who.actor,
      who.role ?? null,
      who.method ?? null,
      entry.action,
      entry.target,
      JSON.stringify(entry.details ?? {}),
      who.address,
      entry.group ?? null,
    ],
  };
}

export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  target?: string | undefined;
  /** Only the rows of these consumer groups (`AuditAction.group`); undefined: every row, of a group or none. */
  groups?: readonly string[] | undefined;
}

export interface AuditRow {
  id: number;
  at: Date;
  actor: string;
  role: string | null;
  authMethod: string | null;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
  remoteAddress: string | null;
  group: string | null;
}

/**
 * Newest first, `limit` rows matching `filter` (each field an exact match) before the entry `beforeId`
 * (exclusive) when given. Each filter has its index (`audit_log_<field>_idx`, with `id`; groups: `audit_log_group_idx`).
 */
export function listAudit(limit: number, filter: AuditFilter = {}, beforeId?: number): Statement {
  const params = new Params();
  const where: string[] = [];
  for (const field of ['actor', 'action', 'target'] as const) {
    const value = filter[field];
    if (value !== undefined) where.push(`${field} = ${params.add(value)}`);
  }
  if (filter.groups !== undefined) where.push(`consumer_group = any(${params.add(filter.groups)}::text[])`);
  if (beforeId !== undefined) where.push(`id < ${params.add(beforeId)}`);
  return {
    text: `select id, at, actor, role, auth_method as "authMethod", action, target, details,
                  remote_address as "remoteAddress", consumer_group as "group"
             from audit_log ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
            order by id desc limit ${params.add(limit)}`,
    values: params.values,
  };
}

/**
 * Removes the audit rows older than `olderThanDays` (at least 90) through `audit_log_purge`, the only DELETE the
 * append-only trigger lets through; answers `removed`.
 */
/** How many rows `purgeAudit(olderThanDays)` would remove now (a dry run). */
export function countAuditOlderThan(olderThanDays: number): Statement {
  return {
    text: `select count(*)::int as n from audit_log where at < now() - make_interval(days => $1)`,
    values: [olderThanDays],
  };
}

export function purgeAudit(olderThanDays: number): Statement {
  return {
    text: `select audit_log_purge(make_interval(days => $1)) as removed`,
    values: [olderThanDays],
  };
}
