/**
 * A reference point for `pnpm bench`, never deployed: the receiver's own verify + ingest() behind a bare
 * `node:http` server, with no Hono, no logging and no metrics. Measured beside the real receiver in the same
 * run, it tells what the HTTP stack of Node costs on this machine by itself (the part no code of ours can
 * remove) apart from what our layers add on top of it.
 *
 * Reads the receiver's environment (`parseConfig`), serves `POST /webhooks/:provider` and `GET /healthz`, answers
 * like the receiver (`{"status":"accepted"|"duplicate","id":...}`), and any failure as a bare 503.
 */
import http from 'node:http';
import { createSender } from '../../packages/receiver/src/boss.ts';
import { parseConfig } from '../../packages/receiver/src/config/env.ts';
import { createLogger } from '../../packages/receiver/src/logger.ts';
import { createRequestPool } from '../../packages/receiver/src/receiver.ts';
import { ingest } from '../../packages/inbox/src/ingest.ts';
import { createProviders } from '@webhook-inbox/providers';
import { ensureQueues } from '../../packages/inbox/src/queue.ts';

const config = parseConfig();
const logger = createLogger('warn');
const pool = createRequestPool(config, logger);
const boss = createSender(config.databaseUrl, logger);
await boss.start();
await ensureQueues(boss);
const providers = createProviders({
  stripeSecrets: config.stripeSecrets,
  shopifySecrets: config.shopifySecrets,
  standardWebhooks: config.standardWebhooks,
  toleranceSeconds: config.toleranceSeconds,
});
const deps = { pool, boss };
const WEBHOOK = /^\/webhooks\/([^/?]+)/;

function answer(response: http.ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/healthz') return answer(response, 200, '{"status":"ok"}');
  const provider =
    request.method === 'POST' ? providers.get(WEBHOOK.exec(request.url ?? '')?.[1] ?? '') : undefined;
  if (!provider) return answer(response, 404, '{"error":{"code":"not_found"}}');
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const rawBody = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const header = (field: string) => {
      const value = request.headers[field.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    let eventId = '';
    Promise.resolve()
      .then(() => {
        const event = provider.verify({ rawBody, header }, new Date());
        eventId = event.eventId;
        return ingest(deps, event);
      })
      .then(
        (outcome) => answer(response, 200, `{"status":"${outcome}","id":${JSON.stringify(eventId)}}`),
        (error: unknown) => answer(response, 503, JSON.stringify({ error: String(error) })),
      );
  });
});
server.listen(config.port, config.host);

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void boss
    .stop({ graceful: false, close: true })
    .then(() => pool.end())
    .finally(() => process.exit(0));
});
