import {
  createApiToken,
  listApiTokens,
  parseTokenRequest,
  revokeApiToken,
  TokenError,
  type ApiTokenRow,
} from '@webhook-inbox/operator/access/tokens';
import type { CliContext } from '../context.ts';
import { NotFoundError, UsageError } from '../errors.ts';
import { printJson, printRows } from '../output.ts';

/**
 * `tokens create|list|revoke`: API tokens, on the database (DATABASE_URL), as the OS user at this host; each change
 * audited in its transaction. The token is printed once, at creation.
 */

export interface CreateTokenOptions {
  role: string;
  /** Consumer groups it is limited to; none given: every group. */
  group?: string[];
  expiresIn?: string;
  json: boolean;
}

/** A refused token operation as the CLI's own errors: not found is exit 3, the rest wrong usage (exit 2). */
async function asCliError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    throw error.code === 'not_found' ? new NotFoundError(error.message) : new UsageError(error.message);
  }
}

export async function createToken(
  context: CliContext,
  name: string,
  options: CreateTokenOptions,
): Promise<void> {
  const days = options.expiresIn === undefined ? undefined : /^(\d{1,4})d?$/.exec(options.expiresIn)?.[1];
  if (options.expiresIn !== undefined && days === undefined) {
    throw new UsageError(`--expires-in ${options.expiresIn}: a number of days, e.g. 30d`);
  }
  const { token, row } = await asCliError(
    (async () =>
      createApiToken(
        await context.pool(),
        context.principal(),
        parseTokenRequest({
          name,
          role: options.role,
          groups: options.group?.length ? options.group : null,
          expiresInDays: days === undefined ? undefined : Number(days),
        }),
      ))(),
  );
  if (options.json) {
    printJson({ ...row, token });
    return;
  }
  process.stdout.write(
    `created token ${row.name}: role ${row.role}, groups ${row.groups?.join(', ') ?? 'all'}, ` +
      `expires ${row.expiresAt.toISOString()}\n${token}\n` +
      'This is the only time it is shown: store it now (e.g. WEBHOOK_INBOX_TOKEN in a secret store).\n',
  );
}

export async function listTokens(context: CliContext, json: boolean): Promise<void> {
  const rows = await asCliError((async () => listApiTokens(await context.pool(), context.principal()))());
  const now = Date.now();
  const shown = rows.map((row: ApiTokenRow) => ({
    ...row,
    groups: row.groups?.join(',') ?? 'all',
    status: row.revokedAt ? 'revoked' : row.expiresAt.getTime() <= now ? 'expired' : 'active',
  }));
  printRows(shown, json, [
    'name',
    'role',
    'groups',
    'status',
    'expiresAt',
    'lastUsedAt',
    'createdBy',
    'revokedBy',
  ]);
}

export async function revokeToken(context: CliContext, name: string): Promise<void> {
  const row = await asCliError(
    (async () => revokeApiToken(await context.pool(), context.principal(), name))(),
  );
  process.stdout.write(`revoked token ${row.name}\n`);
}
