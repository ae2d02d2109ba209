import type { Statement } from '@webhook-inbox/inbox/sql';

/** The roles a principal can hold (`access/roles.ts` says what each may do); `api_tokens.role` is one. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Statements on `api_tokens`: the scoped tokens of the admin API and the remote CLI (`access/tokens.ts`). Only a
 * token's SHA-256 is stored; a lookup is by that hash.
 */

/** A token as listed: everything but its hash. */
export interface ApiTokenRow {
  id: number;
  name: string;
  role: Role;
  groups: string[] | null;
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  revokedBy: string | null;
}

const COLUMNS = `id, name, role, groups, created_by as "createdBy", created_at as "createdAt",
                 expires_at as "expiresAt", last_used_at as "lastUsedAt", revoked_at as "revokedAt",
                 revoked_by as "revokedBy"`;

export interface NewApiToken {
  name: string;
  hash: string;
  role: Role;
  groups: readonly string[] | null;
  createdBy: string;
  expiresAt: Date;
}

/** Records a token; a name already used (revoked tokens included) inserts nothing and returns no row. */
export function insertToken(token: NewApiToken): Statement {
  return {
    text: `insert into api_tokens (name, hash, role, groups, created_by, expires_at)
           values ($1, $2, $3, $4::text[], $5, $6)
           on conflict (name) do nothing
           returning ${COLUMNS}`,
    values: [token.name, token.hash, token.role, token.groups, token.createdBy, token.expiresAt],
  };
}

/** The token whose hash is `hash`, revoked and expired ones included (the caller says which it is). */
export function selectByHash(hash: string): Statement {
  return {
    name: 'webhook_inbox_api_token_by_hash',
    text: `select ${COLUMNS}, expires_at <= now() as expired from api_tokens where hash = $1`,
    values: [hash],
  };
}

/**
 * Marks a token used now, unless a use within the last minute already did: concurrent requests of one token write
 * the row at most once a minute, whichever receiver serves them.
 */
export function touchToken(id: number): Statement {
  return {
    name: 'webhook_inbox_api_token_touch',
    text: `update api_tokens set last_used_at = now()
            where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    values: [id],
  };
}

/**
 * The tokens a manager limited to `within` may see and revoke: those limited to some of those groups. An unscoped
 * token (`groups` null) reaches every group, so only an unscoped manager (`within` null) reaches it.
 */
const WITHIN = (at: number) =>
  `($${at}::text[] is null or (groups is not null and groups <@ $${at}::text[]))`;

/**
 * Every token within the groups `within` (null: every token), newest first; revoked and expired ones too (the
 * audit log names them).
 */
export function listTokens(within: readonly string[] | null): Statement {
  return {
    text: `select ${COLUMNS} from api_tokens where ${WITHIN(1)} order by id desc`,
    values: [within],
  };
}

/**
 * Revokes the token named `name` unless it already is, or lies outside the groups `within` (null: any token);
 * returns its row when this call revoked it.
 */
export function revokeToken(name: string, revokedBy: string, within: readonly string[] | null): Statement {
  return {
    text: `update api_tokens set revoked_at = now(), revoked_by = $2
            where name = $1 and revoked_at is null and ${WITHIN(3)}
            returning ${COLUMNS}`,
    values: [name, revokedBy, within],
  };
}
