import { coversGroup } from '@webhook-inbox/operator/access/roles';
import {
  DestinationNotFoundError,
  destinationGroup,
  listDestinations,
  setDestinationPaused,
} from '@webhook-inbox/operator/destinations';
import { Hono } from 'hono';
import type pg from 'pg';
import { requirePermission, type AdminEnv } from './access.ts';
import { AdminError } from '../http/errors.ts';

/**
 * `/admin/destinations` (docs/http.md#destinations): what the console's Destinations page shows, for the CLI's
 * remote mode. `GET /` lists the destinations of the principal's consumer groups with their state and figures
 * (`read`); `POST /:name/pause` and `POST /:name/resume` change one of its groups' (`triage`, as in the console),
 * audited as the principal. A destination of another group answers 404 `not_found`, as one that does not exist.
 *
 * @example
 * curl -X POST -H "authorization: Bearer $TOKEN" http://127.0.0.1:3002/admin/destinations/billing-api/pause
 */
export function destinationRoutes(pool: pg.Pool): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get('/', async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read');
    const destinations = (await listDestinations(pool)).filter((d) => coversGroup(principal, d.group));
    return c.json({ destinations });
  });

  for (const action of ['pause', 'resume'] as const) {
    routes.post(`/:name/${action}`, async (c) => {
      const principal = c.get('principal');
      requirePermission(principal, 'triage');
      const name = c.req.param('name');
      try {
        // Another group's destination is as unknown to this token as one that does not exist.
        if (!coversGroup(principal, await destinationGroup(pool, name)))
          throw new DestinationNotFoundError(name);
        const after = await setDestinationPaused(pool, principal, name, action === 'pause');
        return c.json({ name, ...after });
      } catch (error) {
        if (error instanceof DestinationNotFoundError)
          throw new AdminError('not_found', `no destination ${name}`);
        throw error;
      }
    });
  }

  return routes;
}
