import { CASELESS_EVENT_ID_TYPES } from '@webhook-inbox/providers/subject';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, parseConfig } from '../src/config/env.ts';
import { RECEIVER_ARGS } from '@webhook-inbox/scenarios/receiver';

const DB = 'postgres://u:p@127.0.0.1:5432/db';
const STRIPE = 'whsec_do_not_print_me_1';
const SHOPIFY = 'shopify_do_not_print_me_2';

function configError(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseConfig', () => {
  it('applies the documented defaults', () => {
    const { managementAllowedHosts, trustedProxies, ...config } = parseConfig({ DATABASE_URL: DB });
    expect(managementAllowedHosts.entries).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(trustedProxies.entries).toEqual([]);
    expect(config).toEqual({
      console: { oidc: undefined, sessionSecret: undefined, maskedRoles: ['viewer'] },
      consolePublicUrl: undefined,
      databaseUrl: DB,
      databasePooler: 'none',
      host: '127.0.0.1',
      port: 3000,
      managementHost: '127.0.0.1',
      managementPort: 3002,
      adminListener: 'management',
      maxConnections: 1_024,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      bodyTimeoutMs: 10_000,
      bodyBudgetBytes: 32 * 1024 * 1024,
      bodyEvictAfterMs: 0,
      stripeSecrets: [],
      shopifySecrets: [],
      standardWebhooks: [],
      sourcesFile: undefined,
      sources: [],
      // The id search's caseless providers: with no sources of their own, the caseless types.
      caselessIdProviders: CASELESS_EVENT_ID_TYPES,
      toleranceSeconds: 300,
      maxBodyBytes: 1_048_576,
      batch: { maxItems: 10_000, maxBodyBytes: 8 * 1024 * 1024 },
      logLevel: 'info',
      poolSize: 16,
      groupCommitTransactions: 4,
      groupCommitMaxBatch: 64,
      databaseTimeoutMs: 5_000,
      shutdownTimeoutMs: 10_000,
      adminToken: undefined,
      alertWebhookUrl: undefined,
      signatureFailureThreshold: 20,
      tracing: false,
      production: false,
    });
    // Tracing is the OTEL_* environment's to turn on (the rule: tracingEnabled in @webhook-inbox/env).
    expect(
      parseConfig({ DATABASE_URL: DB, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing,
    ).toBe(true);
  });

  it('takes TRUSTED_PROXIES and MANAGEMENT_ALLOWED_HOSTS as lists, naming a wrong entry', () => {
    const config = parseConfig({
      DATABASE_URL: DB,
      TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,192.168.1.7',
      MANAGEMENT_ALLOWED_HOSTS: 'metrics.internal, 10.1.0.0/16,[fd00::5]:9102',
    });
    expect(config.trustedProxies.entries).toEqual(['10.0.0.0/8', 'fd00::/8', '192.168.1.7']);
    expect(config.trustedProxies.has('10.9.9.9')).toBe(true);
    expect(config.trustedProxies.has('127.0.0.1')).toBe(false);
    const hosts = config.managementAllowedHosts;
    expect(
      ['metrics.internal:3002', 'Metrics.Internal', '10.1.2.3:3002', '[fd00::5]:9102'].map((host) =>
        hosts.allows(host),
      ),
    ).toEqual([true, true, true, true]);
    expect(
      ['localhost:3002', '10.2.0.1', '[fd00::5]:3002', 'evil.example', undefined].map((host) =>
        hosts.allows(host),
      ),
    ).toEqual([false, false, false, false, false]);
    // The management listener's own address is allowed by default; a wildcard one is not a name.
    expect(
      parseConfig({ DATABASE_URL: DB, MANAGEMENT_HOST: '10.0.0.5' }).managementAllowedHosts.entries,
    ).toEqual(['localhost', '127.0.0.1', '[::1]', '10.0.0.5']);
    expect(
      parseConfig({ DATABASE_URL: DB, MANAGEMENT_HOST: '0.0.0.0' }).managementAllowedHosts.entries,
    ).toHaveLength(3);

    expect(() => parseConfig({ DATABASE_URL: DB, TRUSTED_PROXIES: '10.0.0.0/8,proxy.internal' })).toThrow(
      /TRUSTED_PROXIES.*"proxy.internal" is not an IP address or CIDR range/,
    );
    expect(() => parseConfig({ DATABASE_URL: DB, MANAGEMENT_ALLOWED_HOSTS: 'localhost,http://x/' })).toThrow(
      /MANAGEMENT_ALLOWED_HOSTS.*"http:\/\/x\/" is not a host name/,
    );
  });

  it('takes an admin token of 16+ characters and an http(s) alert URL', () => {
    expect(parseConfig({ DATABASE_URL: DB, ADMIN_TOKEN: 'a-long-enough-token' }).adminToken).toBe(
      'a-long-enough-token',
    );
    expect(() => parseConfig({ DATABASE_URL: DB, ADMIN_TOKEN: 'short' })).toThrow(/ADMIN_TOKEN/);
    // A bearer token with a space or a quote could never be presented: refused at start-up, not at first use.
    expect(() => parseConfig({ DATABASE_URL: DB, ADMIN_TOKEN: 'a long enough "token"' })).toThrow(
      /ADMIN_TOKEN.*may contain only letters/,
    );
    expect(() => parseConfig({ DATABASE_URL: DB, ALERT_WEBHOOK_URL: 'ftp://x' })).toThrow(
      /ALERT_WEBHOOK_URL/,
    );
  });

  it("takes the console's public URL for alert links, without its trailing slash; refuses what no link can use", () => {
    expect(
      parseConfig({ DATABASE_URL: DB, CONSOLE_PUBLIC_URL: 'https://inbox.example.com/console/' })
        .consolePublicUrl,
    ).toBe('https://inbox.example.com/console');
    expect(parseConfig({ DATABASE_URL: DB, CONSOLE_PUBLIC_URL: '' }).consolePublicUrl).toBeUndefined();
    for (const wrong of ['inbox.example.com/console', 'ftp://inbox/console', 'https://inbox/console?x=1']) {
      expect(() => parseConfig({ DATABASE_URL: DB, CONSOLE_PUBLIC_URL: wrong }), wrong).toThrow(
        /CONSOLE_PUBLIC_URL/,
      );
    }
  });

  it('parses comma-separated secrets (trimmed), Standard Webhooks senders and numbers', () => {
    const config = parseConfig({
      DATABASE_URL: DB,
      PORT: '8080',
      HOST: '0.0.0.0',
      STRIPE_WEBHOOK_SECRET: 'whsec_new, whsec_old\n',
      SHOPIFY_WEBHOOK_SECRET: SHOPIFY,
      STANDARD_WEBHOOKS: 'acme=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      WEBHOOK_TOLERANCE_SECONDS: '60',
      WEBHOOK_MAX_BODY_BYTES: '2048',
      LOG_LEVEL: 'DEBUG',
      DATABASE_POOL_SIZE: '4',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      stripeSecrets: ['whsec_new', 'whsec_old'],
      shopifySecrets: [SHOPIFY],
      standardWebhooks: [{ name: 'acme', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }],
      toleranceSeconds: 60,
      maxBodyBytes: 2048,
      logLevel: 'debug',
      poolSize: 4,
    });
    // What gets logged at start-up: counts, never values.
    const described = JSON.stringify(describeConfig(config));
    expect(described).not.toMatch(/whsec_|do_not_print/);
    expect(described).not.toContain(':p@');
  });

  it('group commit: at most the pool in transactions, and no more than it by default', () => {
    expect(parseConfig({ DATABASE_URL: DB, DATABASE_POOL_SIZE: '2' })).toMatchObject({
      groupCommitTransactions: 2,
    });
    expect(
      parseConfig({ DATABASE_URL: DB, GROUP_COMMIT_TRANSACTIONS: '8', GROUP_COMMIT_MAX_BATCH: '1' }),
    ).toMatchObject({ groupCommitTransactions: 8, groupCommitMaxBatch: 1 });
    expect(() =>
      parseConfig({ DATABASE_URL: DB, DATABASE_POOL_SIZE: '4', GROUP_COMMIT_TRANSACTIONS: '5' }),
    ).toThrow(/GROUP_COMMIT_TRANSACTIONS must be at most DATABASE_POOL_SIZE/);
    expect(() => parseConfig({ DATABASE_URL: DB, GROUP_COMMIT_MAX_BATCH: '0' })).toThrow(
      /GROUP_COMMIT_MAX_BATCH/,
    );
  });

  it('a batching source: BATCH_MAX_ITEMS items, WEBHOOK_MAX_BATCH_BODY_BYTES of body', () => {
    expect(
      parseConfig({ DATABASE_URL: DB, BATCH_MAX_ITEMS: '500', WEBHOOK_MAX_BATCH_BODY_BYTES: '65536' }).batch,
    ).toEqual({ maxItems: 500, maxBodyBytes: 65_536 });
  });

  it('treats empty values as unset', () => {
    expect(parseConfig({ DATABASE_URL: DB, PORT: '', STRIPE_WEBHOOK_SECRET: '' })).toMatchObject({
      port: 3000,
      stripeSecrets: [],
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ WEBHOOK_TOLERANCE_SECONDS: '0' }, 'WEBHOOK_TOLERANCE_SECONDS'],
    [{ WEBHOOK_TOLERANCE_SECONDS: '-5' }, 'WEBHOOK_TOLERANCE_SECONDS'],
    [{ WEBHOOK_MAX_BODY_BYTES: '1.5' }, 'WEBHOOK_MAX_BODY_BYTES'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE'],
    [{ BATCH_MAX_ITEMS: '0' }, 'BATCH_MAX_ITEMS'],
    [{ BATCH_MAX_ITEMS: '100001' }, 'BATCH_MAX_ITEMS'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ STRIPE_WEBHOOK_SECRET: `${STRIPE},,whsec_x` }, 'STRIPE_WEBHOOK_SECRET'],
    [{ STANDARD_WEBHOOKS: 'stripe=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }, 'STANDARD_WEBHOOKS'],
    [{ STANDARD_WEBHOOKS: 'acme=not base64!' }, 'STANDARD_WEBHOOKS'],
    [{ MANAGEMENT_PORT: '3000' }, 'MANAGEMENT_PORT must differ from PORT'],
    [{ ADMIN_LISTENER: 'everywhere' }, 'ADMIN_LISTENER'],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS'],
    [
      { WEBHOOK_BODY_BUDGET_BYTES: '1000' },
      'WEBHOOK_BODY_BUDGET_BYTES must be at least WEBHOOK_MAX_BODY_BYTES',
    ],
    [
      { WEBHOOK_BODY_BUDGET_BYTES: String(4 * 1024 * 1024) },
      'WEBHOOK_BODY_BUDGET_BYTES must be at least WEBHOOK_MAX_BATCH_BODY_BYTES',
    ],
    [{ HEADERS_TIMEOUT_MS: '40000' }, 'HEADERS_TIMEOUT_MS must be at most REQUEST_TIMEOUT_MS'],
    [{ WEBHOOK_BODY_TIMEOUT_MS: '30000' }, 'WEBHOOK_BODY_TIMEOUT_MS must be less than REQUEST_TIMEOUT_MS'],
  ])('refuses %j, naming %s and never echoing a secret', (env, variable) => {
    const error = configError({ DATABASE_URL: DB, ...env });
    expect(error.message).toContain(variable);
    expect(error.message).not.toContain('do_not_print');
    expect(error.message).not.toContain('not base64!');
  });

  it('requires DATABASE_URL', () => {
    expect(configError({}).message).toContain('DATABASE_URL');
  });

  it('NODE_ENV=production refuses to start without the Stripe and Shopify secrets', () => {
    const error = configError({ DATABASE_URL: DB, NODE_ENV: 'production' });
    expect(error.issues).toEqual([
      'STRIPE_WEBHOOK_SECRET is required when NODE_ENV=production',
      'SHOPIFY_WEBHOOK_SECRET is required when NODE_ENV=production',
    ]);
    expect(
      parseConfig({
        DATABASE_URL: DB,
        NODE_ENV: 'production',
        STRIPE_WEBHOOK_SECRET: STRIPE,
        SHOPIFY_WEBHOOK_SECRET: SHOPIFY,
      }).production,
    ).toBe(true);
  });
});

function runServer(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...RECEIVER_ARGS], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('server.ts with a bad environment', () => {
  it('exits 2 with a message naming the variable, and no secret in it', async () => {
    const { code, output } = await runServer({
      DATABASE_URL: DB,
      PORT: 'eighty',
      STRIPE_WEBHOOK_SECRET: STRIPE,
      SHOPIFY_WEBHOOK_SECRET: ` ,${SHOPIFY}`,
    });
    expect(code).toBe(2);
    expect(output).toContain('PORT');
    expect(output).toContain('SHOPIFY_WEBHOOK_SECRET');
    expect(output).not.toContain('do_not_print');
  });

  it('exits 2 in production without secrets', async () => {
    const { code, output } = await runServer({ DATABASE_URL: DB, NODE_ENV: 'production' });
    expect(code).toBe(2);
    expect(output).toContain('STRIPE_WEBHOOK_SECRET is required when NODE_ENV=production');
  });

  it('exits 1 with a clear message when the database is unreachable', async () => {
    const { code, output } = await runServer({
      DATABASE_URL: 'postgres://u:secretpw@127.0.0.1:1/db',
      STRIPE_WEBHOOK_SECRET: STRIPE,
      DATABASE_TIMEOUT_MS: '500',
    });
    expect(code).toBe(1);
    expect(output).toContain('cannot start');
    expect(output).not.toContain('secretpw');
    expect(output).not.toContain('do_not_print');
  });

  it('logs the database URL masked from its parsed parts: user info with an `@` in the password, query secrets', async () => {
    const { code, output } = await runServer({
      DATABASE_URL:
        'postgres://app:pw@with-at@127.0.0.1:1/db?sslmode=disable&password=qpw_secret&sslpassword=ssl_secret',
      STRIPE_WEBHOOK_SECRET: STRIPE,
      DATABASE_TIMEOUT_MS: '500',
    });
    expect(code).toBe(1);
    const starting = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; config?: { database: string } })
      .find((line) => line.msg === 'receiver starting');
    expect(starting?.config?.database).toBe(
      'postgres://***@127.0.0.1:1/db?sslmode=disable&password=***&sslpassword=***',
    );
    for (const secret of ['pw@with-at', 'with-at', 'qpw_secret', 'ssl_secret'])
      expect(output).not.toContain(secret);
  });
});
