import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import { CodedError } from '@webhook-inbox/inbox/errors';
import { inTransaction } from '@webhook-inbox/inbox/transaction';
import { isGroupName } from '@webhook-inbox/inbox/queue';
import { apiTokens, auditLog } from '../sql/index.ts';
import type { ApiTokenRow } from '../sql/api-tokens.ts';
import { can, isRole, type Principal, type Role } from './roles.ts';

/**
 * Scoped API tokens: created (shown once), listed and revoked by an admin, each with a role, the consumer groups
 * it is limited to, an expiry and a last-used time. An admin limited to groups manages only tokens limited to
 * those groups; the others (unscoped ones included) are invisible to it. Only a token's SHA-256 is stored: a token is 32 random bytes,
 * so a fast hash is enough (no dictionary to try). Every creation and revocation writes its audit row in the same
 * transaction.
 */

export type { ApiTokenRow };

/** Every token starts with it: a leaked one is recognisable (secret scanners), and a bearer that lacks it is not one. */
export const TOKEN_PREFIX = 'whi_';
/** A token's name: its audit actor is `token:<name>`. */
export const TOKEN_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
export const DEFAULT_TOKEN_DAYS = 90;
export const MAX_TOKEN_DAYS = 366;
/** How stale `last_used_at` may be: a token's row is written at most once per this, however often it is used. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export type TokenErrorCode =
  'invalid_request' | 'forbidden' | 'token_exists' | 'not_found' | 'token_expired' | 'token_revoked';

/** A refused token operation, or an expired or revoked token, with a stable code. */
export class TokenError extends CodedError<TokenErrorCode> {
  override name = 'TokenError';
}

/** What an admin asks for: checked by `parseTokenRequest`. */
export interface TokenRequest {
  name: string;
  role: Role;
  /** The consumer groups it is limited to; `null`: every group. */
  groups: string[] | null;
  expiresInDays: number;
}

/** Checks a token request from any surface (admin API JSON, CLI flags, console form); throws `invalid_request`. */
export function parseTokenRequest(input: {
  name?: unknown;
  role?: unknown;
  groups?: unknown;
  expiresInDays?: unknown;
}): TokenRequest {
  const bad = (message: string) => new TokenError('invalid_request', message);
  if (typeof input.name !== 'string' || !TOKEN_NAME.test(input.name)) {
    throw bad(
      'name: 1-63 characters: lower-case letters, digits, ".", "_" and "-", starting with a letter or digit',
    );
  }
  if (!isRole(input.role)) throw bad('role: one of viewer, operator, admin');
  let groups: string[] | null = null;
  if (input.groups !== undefined && input.groups !== null) {
    if (
      !Array.isArray(input.groups) ||
      input.groups.length === 0 ||
      input.groups.length > 50 ||
      !input.groups.every((g): g is string => typeof g === 'string' && isGroupName(g))
    ) {
      throw bad('groups: a non-empty list of consumer group names, or null for every group');
    }
    groups = [...new Set(input.groups)].sort();
  }
  const days = input.expiresInDays ?? DEFAULT_TOKEN_DAYS;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_TOKEN_DAYS) {
    throw bad(`expiresInDays: a whole number of days from 1 to ${MAX_TOKEN_DAYS}`);
  }
  return { name: input.name, role: input.role, groups, expiresInDays: days };
}

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** The principal a token acts as, from `address`. */
export function tokenPrincipal(
  row: Pick<ApiTokenRow, 'name' | 'role' | 'groups'>,
  address: string | null,
): Principal {
  return { actor: `token:${row.name}`, role: row.role, method: 'api_token', groups: row.groups, address };
}

const isTokenError = (error: unknown): boolean => error instanceof TokenError;

function requireManager(by: Principal): void {
  if (!can(by.role, 'manage_tokens')) {
    throw new TokenError('forbidden', `role ${by.role} lacks permission manage_tokens`);
  }
}

/**
 * Creates a token for `request` as `by` (an admin) and answers it with its row: the only time the token is seen.
 * A creator limited to some groups can give only a token limited to those groups (or fewer).
 */
export async function createApiToken(
  pool: pg.Pool,
  by: Principal,
  request: TokenRequest,
  now = new Date(),
): Promise<{ token: string; row: ApiTokenRow }> {
  requireManager(by);
  if (
    by.groups !== null &&
    (request.groups === null || !request.groups.every((g) => by.groups!.includes(g)))
  ) {
    throw new TokenError(
      'forbidden',
      `you are limited to groups ${by.groups.join(', ')}: a token you create must be limited to them too`,
    );
  }
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + request.expiresInDays * 86_400_000);
  return inTransaction(
    pool,
    async (client) => {
      const { rows } = await client.query<ApiTokenRow>(
        apiTokens.insertToken({ ...request, hash: hashToken(token), createdBy: by.actor, expiresAt }),
      );
      const row = rows[0];
      if (!row)
        throw new TokenError(
          'token_exists',
          `a token named ${request.name} exists (revoked ones keep their name)`,
        );
      await client.query(
        auditLog.insertAudit(by, {
          action: 'token_created',
          target: `token ${row.name}`,
          details: { role: row.role, groups: row.groups, expiresAt: row.expiresAt.toISOString() },
        }),
      );
      return { token, row };
    },
    isTokenError,
  );
}

/**
 * Revokes the token named `name` as `by` (an admin): refused from its next request on. An admin limited to groups
 * reaches only the tokens limited to those groups: any other is `not_found`, as one that does not exist.
 */
export async function revokeApiToken(pool: pg.Pool, by: Principal, name: string): Promise<ApiTokenRow> {
  requireManager(by);
  return inTransaction(
    pool,
    async (client) => {
      const { rows } = await client.query<ApiTokenRow>(apiTokens.revokeToken(name, by.actor, by.groups));
      const row = rows[0];
      if (!row) throw new TokenError('not_found', `no unrevoked token named ${name}`);
      await client.query(
        auditLog.insertAudit(by, { action: 'token_revoked', target: `token ${row.name}`, details: {} }),
      );
      return row;
    },
    isTokenError,
  );
}

/** The tokens `by` (an admin) manages: every one, or for an admin limited to groups those limited to them too. */
export async function listApiTokens(pool: pg.Pool, by: Principal): Promise<ApiTokenRow[]> {
  requireManager(by);
  return (await pool.query<ApiTokenRow>(apiTokens.listTokens(by.groups))).rows;
}

/**
 * The token `presented` is: its row when it is one and works (its last use recorded at most once a minute),
 * `undefined` when no token has that hash (a wrong guess), and `TokenError` `token_expired` / `token_revoked` for
 * an expired or revoked one (the caller counts it as a refusal).
 */
export async function findApiToken(pool: pg.Pool, presented: string): Promise<ApiTokenRow | undefined> {
  if (!presented.startsWith(TOKEN_PREFIX)) return undefined;
  const { rows } = await pool.query<ApiTokenRow & { expired: boolean }>(
    apiTokens.selectByHash(hashToken(presented)),
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.revokedAt) throw new TokenError('token_revoked', `token ${row.name} was revoked`);
  if (row.expired)
    throw new TokenError('token_expired', `token ${row.name} expired at ${row.expiresAt.toISOString()}`);
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await pool.query(apiTokens.touchToken(row.id));
  }
  return row;
}
