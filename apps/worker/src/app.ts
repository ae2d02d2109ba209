import {
  allowedHostsOnly,
  HostNotAllowedError,
  type AllowedHosts,
} from '@webhook-inbox/operator/access/allowed-hosts';
import { Hono } from 'hono';
import type { Registry } from 'prom-client';

export interface AppDeps {
  registry: Registry;
  /** True once a shutdown began: /healthz then says so (and fails), so an orchestrator stops routing to it. */
  isStopping: () => boolean;
  /** The `Host` names `/metrics` answers (`WORKER_ALLOWED_HOSTS`); `/healthz` answers any. */
  allowedHosts: AllowedHosts;
}

/**
 * The worker's own small HTTP surface: liveness and Prometheus metrics. `/metrics` only for an allowed `Host`: a
 * DNS-rebinding page in an operator's browser is refused (421 `host_not_allowed`).
 */
export function createApp({ registry, isStopping, allowedHosts }: AppDeps): Hono {
  const app = new Hono();
  app.use('*', allowedHostsOnly(allowedHosts, 'WORKER_ALLOWED_HOSTS', ['/healthz']));
  app.onError((error, c) =>
    error instanceof HostNotAllowedError
      ? c.json({ error: { code: error.code, message: error.message } }, 421)
      : c.json({ error: { code: 'internal_error', message: 'internal error' } }, 500),
  );
  app.get('/healthz', (c) =>
    isStopping() ? c.json({ status: 'stopping' }, 503) : c.json({ status: 'ok' }, 200),
  );
  app.get('/metrics', async (c) =>
    c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType }),
  );
  return app;
}
