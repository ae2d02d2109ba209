/**
 * The shipped observability: the alert rules (docs/observability/alerts.yml) through promtool, their runbooks
 * against the CLI, and the rules and the Grafana dashboard against a real Prometheus scraping a real receiver
 * and worker on loopback: every metric they use must exist. promtool and prometheus come from Debian's
 * `prometheus` package (.ci/run installs it): under CI=true their absence fails the file, elsewhere those parts
 * skip and say so (`requireTool`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findFreePort } from '@webhook-inbox/testing/embedded';
import { createSenderBoss } from '@webhook-inbox/inbox';
import { PURGE_QUEUE } from '@webhook-inbox/operator';
import { onPath, requireTool, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig as parseReceiverConfig, startReceiver } from '../packages/receiver/src/index.ts';
import { parseConfig as parseWorkerConfig, startWorker } from '../apps/worker/src/index.ts';
import { receiverEnv, stripeDelivery } from '@webhook-inbox/scenarios/receiver';
import { queueEnv } from '@webhook-inbox/scenarios/worker';

const root = fileURLToPath(new URL('..', import.meta.url));
const RULES = path.join(root, 'docs/observability/alerts.yml');
const RULE_TESTS = path.join(root, 'docs/observability/alerts.test.yml');
const DASHBOARD = path.join(root, 'docs/observability/grafana-dashboard.json');

const INSTALL = "Debian's prometheus package: apt-get install prometheus";
const hasPromtool = requireTool('promtool', onPath('promtool'), INSTALL);
const hasPrometheus = requireTool('prometheus', onPath('prometheus'), INSTALL);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  annotations?: Record<string, string>;
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const alerts = rules.filter((rule) => rule.alert !== undefined);
const dashboardExprs = (
  JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets?: { expr: string }[] }[] }
).panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));

/** The metric names an expression reads (ours: `webhook_*`, `db_pool_*`); recording rules' names have a colon. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/(?<![\w:])(?:webhook|db_pool)_[a-z0-9_]*[a-z0-9](?![\w:])/g)].map((m) => m[0]);
}

describe.runIf(hasPromtool)('alert rules through promtool', () => {
  it('`promtool check rules` accepts them', () => {
    const run = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('`promtool test rules`: each alert fires on its unit test and stays quiet on the near misses', () => {
    // Run from the rules' folder with relative paths: Prometheus offsets a group's evaluation times by a hash of
    // its file's path, so an absolute path (a different checkout folder) shifts which sample an alert reads.
    const run = spawnSync('promtool', ['test', 'rules', path.basename(RULE_TESTS)], {
      cwd: path.dirname(RULE_TESTS),
      encoding: 'utf8',
    });
    expect(run.stdout + run.stderr).toContain('SUCCESS');
    expect(run.status).toBe(0);
    const tested = readFileSync(RULE_TESTS, 'utf8');
    for (const { alert } of alerts)
      expect(tested, `a unit test for ${alert}`).toContain(`alertname: ${alert}`);
  });
});

describe('alert runbooks', () => {
  const cli = readFileSync(path.join(root, 'docs/cli.md'), 'utf8');
  it.each(alerts.map((rule) => [rule.alert, rule.annotations?.runbook ?? '']))(
    '%s names `npx webhook-inbox` commands the CLI has',
    (_alert, runbook) => {
      const commands = [...runbook.matchAll(/`npx webhook-inbox ([a-z]+)/g)].map((m) => m[1]);
      expect(commands.length).toBeGreaterThan(0);
      for (const command of commands) expect(cli).toContain(`\`npx webhook-inbox ${command} `);
    },
  );
});

describe.runIf(hasPrometheus)('the dashboard and the rules against a real Prometheus', () => {
  const db = useTestDatabase();

  it('scrapes the receiver and the worker, finds every metric they use, and evaluates every rule', async () => {
    const used = new Set([...dashboardExprs, ...rules.map((rule) => rule.expr)].flatMap(metricNames));
    expect(used.size).toBeGreaterThan(10);

    const mailDir = mkdtempSync(path.join(tmpdir(), 'observability-mail-'));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'observability-prometheus-'));
    const receiver = await startReceiver(
      parseReceiverConfig(receiverEnv(db.url, { PORT: '0', LOG_LEVEL: 'silent' })),
    );
    const worker = await startWorker(
      parseWorkerConfig({
        DATABASE_URL: db.url,
        WORKER_PORT: '0',
        MAIL_DIR: mailDir,
        LOG_LEVEL: 'silent',
        ...queueEnv(),
      }),
    );
    const boss = createSenderBoss(db.url, { applicationName: 'observability-test' });
    const port = await findFreePort();
    const config = path.join(dataDir, 'prometheus.yml');
    writeFileSync(
      config,
      JSON.stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [RULES],
        scrape_configs: [
          { job_name: 'receiver', static_configs: [{ targets: [new URL(receiver.managementUrl).host] }] },
          { job_name: 'worker', static_configs: [{ targets: [new URL(worker.url).host] }] },
        ],
      }),
    );
    const prometheus = spawn(
      'prometheus',
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dataDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    prometheus.stderr.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4_000)));
    const api = async <T>(route: string): Promise<T> => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/${route}`, {
        signal: AbortSignal.timeout(5_000),
      });
      return ((await response.json()) as { data: T }).data;
    };
    try {
      // Counters and histograms with labels exist once something happened: an accepted and a refused webhook, its
      // effects, a retention run.
      for (const delivery of [stripeDelivery(), stripeDelivery({ secret: 'whsec_not_the_secret' })]) {
        const response = await fetch(new URL(delivery.path, receiver.url), {
          method: 'POST',
          headers: delivery.headers,
          body: delivery.body,
        });
        await response.arrayBuffer();
      }
      await boss.start();
      await boss.send(PURGE_QUEUE, {});

      let names: string[] = [];
      const missing = () => [...used].filter((name) => !names.includes(name));
      await waitFor(
        async () => {
          names = await api<string[]>('label/__name__/values');
          return missing().length === 0;
        },
        { timeout: 60_000, interval: 500, message: 'every metric scraped' },
      ).catch(() => {});
      expect(missing(), `metrics Prometheus never scraped (its log: ${log})`).toEqual([]);

      // Every rule evaluated without an error against the real series.
      const groups = await waitFor(
        async () => {
          const { groups } = await api<{ groups: { rules: { name: string; health: string }[] }[] }>('rules');
          const all = groups.flatMap((group) => group.rules);
          return all.length === rules.length && all.every((rule) => rule.health !== 'unknown') && all;
        },
        { timeout: 30_000, interval: 500, message: 'every rule evaluated' },
      );
      expect(groups.filter((rule) => rule.health !== 'ok')).toEqual([]);
    } finally {
      prometheus.kill('SIGTERM');
      await new Promise((resolve) =>
        prometheus.exitCode === null ? prometheus.once('exit', resolve) : resolve(0),
      );
      await boss.stop({ graceful: false, close: true });
      await worker.close();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(mailDir, { recursive: true, force: true });
    }
  });
});
