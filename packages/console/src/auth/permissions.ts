import { can, type Permission } from '@webhook-inbox/operator/access/roles';
import type { MiddlewareHandler } from 'hono';
import type { ConsoleContext, ConsoleEnv } from '../context.ts';
import { ConsoleError } from '../errors.ts';

/** True when the request's principal has `permission`: pages show an action's button only then. */
export function allowed(c: ConsoleContext, permission: Permission): boolean {
  return can(c.get('principal').role, permission);
}

/**
 * Refuses (403 `forbidden`) a request whose principal lacks the permission, before the route runs; `permission`
 * may depend on the request (a replay that forces a completed effect needs `force`). The routes' guards are listed
 * in one place, `app.ts`, so a hidden button is never the only check.
 */
export function requirePermission(
  permission: Permission | ((c: ConsoleContext) => Promise<Permission>),
): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const needed = typeof permission === 'string' ? permission : await permission(c);
    if (!allowed(c, needed)) {
      const { role } = c.get('principal');
      throw new ConsoleError(
        'forbidden',
        `the ${role} role cannot do this (it needs the ${needed} permission)`,
      );
    }
    await next();
  };
}
