import { coversGroup } from '@webhook-inbox/operator/access/roles';
import {
  DestinationNotFoundError,
  listDestinations,
  setDestinationPaused,
  type DestinationOverview,
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
      await visibleDestination(pool, name, (d) => coversGroup(principal, d.group));
      try {
        await setDestinationPaused(pool, principal, name, action === 'pause');
      } catch (error) {
        if (error instanceof DestinationNotFoundError) throw new AdminError('not_found', error.message);
        throw error;
      }
      const [after] = (await listDestinations(pool)).filter((d) => d.name === name);
      return c.json({ name, state: after?.state ?? null, reason: after?.reason ?? null });
    });
  }

  return routes;
}

/** The destination `name` if a worker started it and `visible` allows it; else 404 `not_found`. */
async function visibleDestination(
  pool: pg.Pool,
  name: string,
  visible: (destination: DestinationOverview) => boolean,
): Promise<DestinationOverview> {
  const destination = (await listDestinations(pool)).find((d) => d.name === name);
  if (!destination || !visible(destination)) throw new AdminError('not_found', `no destination ${name}`);
  return destination;
}
