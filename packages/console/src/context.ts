import type { Principal } from '@webhook-inbox/inbox/access/roles';
import type { EffectLookup } from '@webhook-inbox/inbox/replay';
import { auditLog } from '@webhook-inbox/inbox/sql';
import type { Context, Hono } from 'hono';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Session, Sessions } from './auth/session.ts';
import { run } from './db.ts';

export type ConsoleEnv = { Variables: { session: Session; csrf: string } };
export type ConsoleApp = Hono<ConsoleEnv>;
export type ConsoleContext = Context<ConsoleEnv>;

/** What every page handler gets: dependencies and the few services the console itself provides. */
export interface ConsoleServices {
  pool: pg.Pool;
  boss: PgBoss;
  logger: Logger;
  /**
   * The effects registered per event type in a consumer group (default: the default group), for a replay's plan:
   * `undefined` when none are known.
   */
  effectsFor: (group?: string) => Promise<EffectLookup | undefined>;
  /** Where the app is mounted, e.g. `/console`; every link starts with it. */
  base: string;
  now: () => Date;
  sessions: Sessions;
  queryTimeoutMs: number;
  /** Tells this process's operations runner that an operation is waiting (it also polls). */
  wakeRunner: () => void;
}

/** The client's address as the server saw it, when the runtime tells (@hono/node-server does). */
export function remoteAddress(c: Context): string | null {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? null;
}

/**
 * Who the request acts as: a session signed in with the admin token is the break-glass admin, named as it signed
 * in.
 */
export function principalOf(c: ConsoleContext): Principal {
  const session = c.get('session');
  return {
    actor: session.who,
    role: 'admin',
    method: 'break_glass',
    groups: null,
    address: remoteAddress(c),
  };
}

/** Writes one audit row for an action of the signed-in operator. */
export async function audit(
  services: ConsoleServices,
  c: ConsoleContext,
  action: string,
  target: string | null,
  details: Record<string, unknown> = {},
): Promise<void> {
  const session = c.get('session');
  await run(
    services.pool,
    auditLog.insertAudit(principalOf(c), {
      action,
      target,
      details: { ...details, session: session.id.slice(0, 8) },
    }),
  );
}
