import type { Statement } from './statement.ts';

/** Statements on `audit_log`: the console's audit trail (its actions and sign-ins). */

export interface AuditEntry {
  actor: string;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
  remoteAddress: string | null;
}

export function insertAudit(entry: AuditEntry): Statement {
  return {
    text: `insert into audit_log (actor, action, target, details, remote_address)
           values ($1, $2, $3, $4::jsonb, $5) returning id`,
    values: [entry.actor, entry.action, entry.target, JSON.stringify(entry.details), entry.remoteAddress],
  };
}

/** Newest first, `limit` rows before the entry `beforeId` (exclusive) when given. */
export function listAudit(limit: number, beforeId?: number): Statement {
  return {
    text: `select id, at, actor, action, target, details, remote_address as "remoteAddress"
             from audit_log ${beforeId === undefined ? '' : 'where id < $2'}
            order by id desc limit $1`,
    values: beforeId === undefined ? [limit] : [limit, beforeId],
  };
}

/**
 * The sign-in throttle: refused sign-ins from `address` since `since` and since that address's last successful
 * one (the audit log is the record of failures), and when the oldest of them was. `audit_log_at_idx` bounds it
 * to the window's rows.
 */
export function recentLoginFailures(address: string, since: Date): Statement {
  return {
    text: `select count(*)::int as n, min(at) as oldest
             from audit_log
            where action = 'login_refused' and remote_address = $1 and at > $2
              and at > coalesce((select max(at) from audit_log
                                  where action = 'login' and remote_address = $1 and at > $2), '-infinity')`,
    values: [address, since],
  };
}
