/**
 * Who may do what. Every surface (console, admin API, CLI, scheduled jobs) acts as a `Principal`, checks its
 * permission with `can`, and records the principal in `audit_log` with the change. Roles nest: an operator can do
 * everything a viewer can, an admin everything an operator can. `Role` is the `api_tokens.role` column's type and
 * `AuthMethod` the `audit_log.method` column's, so they are declared with those tables' statements.
 */
import { ROLES, type Role } from '../sql/api-tokens.ts';
import type { AuthMethod } from '../sql/audit-log.ts';

export { ROLES, type AuthMethod, type Role };

export type Permission =
  /** List and open events; payloads masked unless `read_payload`. */
  | 'read'
  | 'read_payload'
  /** Replay an event's unfinished effects, one event or in bulk. */
  | 'replay'
  /** Acknowledge or resolve a failure group: the operators' decision what to look at. */
  | 'triage'
  /** Re-run an effect that already completed (`forceEffect`). */
  | 'force'
  /** Remove events and payloads ahead of retention. */
  | 'purge'
  /** Create, list and revoke API tokens. */
  | 'manage_tokens';

const GRANTS: Record<Role, ReadonlySet<Permission>> = {
  viewer: new Set(['read']),
  operator: new Set(['read', 'read_payload', 'replay', 'triage']),
  admin: new Set(['read', 'read_payload', 'replay', 'triage', 'force', 'purge', 'manage_tokens']),
};

export function can(role: Role, permission: Permission): boolean {
  return GRANTS[role].has(permission);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export interface Principal {
  /** The audit actor: a verified subject or email, a token's name, `user@host`, or the job's name; never typed. */
  actor: string;
  role: Role;
  method: AuthMethod;
  /** The consumer groups this principal is limited to; `null` when it is not limited. */
  groups: readonly string[] | null;
  /** The client address the request came from (after `TRUSTED_PROXIES`), when there is a request. */
  address: string | null;
}

/** True when `principal` may act on consumer group `group`. */
export function coversGroup(principal: Principal, group: string): boolean {
  return principal.groups === null || principal.groups.includes(group);
}

/** A scheduled job of the inbox itself (`retention`, `reconcile`), as the audit log names it. */
export function systemPrincipal(job: string): Principal {
  return { actor: `system:${job}`, role: 'admin', method: 'system', groups: null, address: null };
}
