import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, parseConfig } from '../src/env.ts';

const URL = 'postgres://user:secret@db.internal:5432/inbox';

describe('worker configuration', () => {
  it('has defaults for everything but DATABASE_URL', () => {
    const config = parseConfig({ DATABASE_URL: URL, INIT_CWD: '/srv/app' });
    expect(config).toMatchObject({
      port: 3001,
      host: '127.0.0.1',
      smtpUrl: undefined,
      mailFrom: 'welcome@localhost',
      mailDir: path.resolve('/srv/app/.data/mail'),
      queue: {
        retryLimit: 8,
        retryDelay: 5,
        retryBackoff: true,
        retryDelayMax: 900,
        expireInSeconds: 300,
        heartbeatSeconds: 10,
      },
      batchSize: 50,
      concurrency: 4,
      superviseIntervalSeconds: 5,
    });
  });

  it('reads the heartbeat: 10 s by default, 0 for none, never under pg-boss floor of 10 s', () => {
    const heartbeat = (value: string) =>
      parseConfig({ DATABASE_URL: URL, WORKER_HEARTBEAT_SECONDS: value }).queue.heartbeatSeconds;
    expect(heartbeat('30')).toBe(30);
    expect(heartbeat('0')).toBeNull();
    expect(heartbeat(' ')).toBe(10);
    expect(() => heartbeat('5')).toThrow('WORKER_HEARTBEAT_SECONDS must be 0 (off) or at least 10');
    expect(() => heartbeat('7200')).toThrow('WORKER_HEARTBEAT_SECONDS must be at most 3600');
  });

  it('reads the retry policy and SMTP', () => {
    const config = parseConfig({
      DATABASE_URL: URL,
      SMTP_URL: 'smtp://mail:1025',
      WORKER_RETRY_LIMIT: '3',
      WORKER_RETRY_DELAY_SECONDS: '2',
      WORKER_RETRY_BACKOFF: 'false',
      WORKER_JOB_TIMEOUT_SECONDS: '60',
      WORKER_POLL_SECONDS: '0.5',
    });
    expect(config.queue).toMatchObject({
      retryLimit: 3,
      retryDelay: 2,
      retryBackoff: false,
      expireInSeconds: 60,
    });
    expect(config.pollingIntervalSeconds).toBe(0.5);
    expect(config.smtpUrl).toBe('smtp://mail:1025');
  });

  it('bounds a statement of an effect: 60 s by default, 1 s to 1 h', () => {
    expect(parseConfig({ DATABASE_URL: URL }).statementTimeoutMs).toBe(60_000);
    expect(
      parseConfig({ DATABASE_URL: URL, WORKER_STATEMENT_TIMEOUT_MS: ' 120000 ' }).statementTimeoutMs,
    ).toBe(120_000);
    expect(() => parseConfig({ DATABASE_URL: URL, WORKER_STATEMENT_TIMEOUT_MS: '500' })).toThrow(
      'WORKER_STATEMENT_TIMEOUT_MS must be at least 1000',
    );
    expect(() => parseConfig({ DATABASE_URL: URL, WORKER_STATEMENT_TIMEOUT_MS: '1.5s' })).toThrow(
      'WORKER_STATEMENT_TIMEOUT_MS must be a number between 1000 and 3600000',
    );
  });

  it('reads the consumer group: default unless WORKER_GROUP names a valid one', () => {
    expect(parseConfig({ DATABASE_URL: URL }).group).toBe('default');
    expect(parseConfig({ DATABASE_URL: URL, WORKER_GROUP: ' ' }).group).toBe('default');
    expect(parseConfig({ DATABASE_URL: URL, WORKER_GROUP: 'billing-analytics' }).group).toBe(
      'billing-analytics',
    );
    for (const bad of ['Billing', '9lives', 'a.b', 'x'.repeat(41)]) {
      expect(() => parseConfig({ DATABASE_URL: URL, WORKER_GROUP: bad })).toThrow(
        /WORKER_GROUP.*consumer group name: 1-40 characters/,
      );
    }
  });

  it('lists every wrong variable at once', () => {
    let error: unknown;
    try {
      parseConfig({ WORKER_PORT: 'http', SMTP_URL: 'mail.internal' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues.join('\n');
    expect(issues).toContain('DATABASE_URL is required');
    expect(issues).toContain('WORKER_PORT must be a number');
    expect(issues).toContain('SMTP_URL must be an smtp://');
  });

  it('never logs credentials', () => {
    const described = JSON.stringify(
      describeConfig(parseConfig({ DATABASE_URL: URL, SMTP_URL: 'smtps://apikey:hunter2@smtp.example:465' })),
    );
    expect(described).not.toContain('secret');
    expect(described).not.toContain('hunter2');
  });

  it('reads the destinations file once, and refuses a wrong one naming the destination and the field', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'destinations-'));
    try {
      const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
      const good = path.join(dir, 'destinations.yaml');
      writeFileSync(
        good,
        `destinations:\n  crm:\n    url: https://crm.example.com/h?token=t0p\n    events: [{ source: stripe }]\n    secrets: [${secret}]\n`,
      );
      const config = parseConfig({ DATABASE_URL: URL, WEBHOOK_DESTINATIONS_FILE: good });
      expect(config.destinations.map((d) => d.name)).toEqual(['crm']);
      expect(JSON.stringify(describeConfig(config))).not.toMatch(/t0p|whsec_/);

      const bad = path.join(dir, 'bad.yaml');
      writeFileSync(
        bad,
        `destinations:\n  crm:\n    url: https://crm.example.com\n    events: [{ source: stripe }]\n    timeout: forever\n    secrets: [${secret}]\n`,
      );
      const error = (() => {
        try {
          parseConfig({ DATABASE_URL: URL, WEBHOOK_DESTINATIONS_FILE: bad });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(
        'WEBHOOK_DESTINATIONS_FILE (bad.yaml: destination "crm": timeout: "forever" is not a duration',
      );
      expect((error as Error).message).not.toContain('whsec_');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
