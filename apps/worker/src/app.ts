import { Hono } from 'hono';
import type { Registry } from 'prom-client';

export interface AppDeps {
  registry: Registry;
  /** True once a shutdown began: /healthz then says so (and fails), so an orchestrator stops routing to it. */
  isStopping: () => boolean;
}

/** The worker's own small HTTP surface: liveness and Prometheus metrics. */
export function createApp({ registry, isStopping }: AppDeps): Hono {
  const app = new Hono();
  app.get('/healthz', (c) =>
    isStopping() ? c.json({ status: 'stopping' }, 503) : c.json({ status: 'ok' }, 200),
  );
  app.get('/metrics', async (c) =>
    c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType }),
  );
  return app;
}
