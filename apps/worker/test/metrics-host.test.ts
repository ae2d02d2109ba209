import os from 'node:os';
import { getWithHost, useTestDatabase } from '@webhook-inbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/env.ts';
import { startWorker, type Worker } from '../src/worker.ts';

// The worker's /metrics answers only the Host names it allows (WORKER_ALLOWED_HOSTS; default the loopback names),
// over real HTTP: a DNS-rebinding page (its own name resolved to 127.0.0.1) gets 421 `host_not_allowed`. Attack
// test: /metrics answered any Host before.

const db = useTestDatabase();
let worker: Worker | undefined;
afterEach(async () => {
  await worker?.close();
  worker = undefined;
});

/** A worker on a free port, its mail to files; `env` adds to its environment. */
const QUIET = { WORKER_PORT: '0', MAIL_DIR: os.tmpdir(), LOG_LEVEL: 'silent' };
const start = async (env: Record<string, string> = {}) => {
  worker = await startWorker(parseConfig({ ...QUIET, DATABASE_URL: db.url, ...env }));
  return { base: worker.url, port: new URL(worker.url).port };
};

describe('the worker’s Host allow-list', () => {
  it('refused: /metrics for a rebound Host is 421 host_not_allowed (answered 200 before); loopback names work', async () => {
    const { base, port } = await start();
    expect(await getWithHost(base, '/metrics', `attacker.example:${port}`)).toEqual({
      status: 421,
      code: 'host_not_allowed',
    });
    // The liveness probe answers whatever the Host (an orchestrator sends the pod's address).
    expect((await getWithHost(base, '/healthz', `attacker.example:${port}`)).status).toBe(200);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect((await getWithHost(base, '/metrics', host)).status, host).toBe(200);
    }
  });

  it('answers the names WORKER_ALLOWED_HOSTS lists instead', async () => {
    const { base, port } = await start({ WORKER_ALLOWED_HOSTS: 'metrics.internal, 10.0.0.0/8' });
    expect((await getWithHost(base, '/metrics', 'metrics.internal:9100')).status).toBe(200);
    expect((await getWithHost(base, '/metrics', '10.1.2.3:9100')).status).toBe(200);
    expect(await getWithHost(base, '/metrics', `localhost:${port}`)).toEqual({
      status: 421,
      code: 'host_not_allowed',
    });
  });

  it('refuses a WORKER_ALLOWED_HOSTS entry that is no host at start-up, naming it', () => {
    expect(() => parseConfig({ DATABASE_URL: db.url, WORKER_ALLOWED_HOSTS: 'exa mple' })).toThrow(
      /WORKER_ALLOWED_HOSTS.*"exa mple" is not a host name/,
    );
  });
});
