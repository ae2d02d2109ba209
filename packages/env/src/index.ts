/**
 * The pieces of environment parsing the receiver and the worker share (their `env.ts`): how a blank
 * variable, a bounded number, a log level or a database URL is read, and how a failed parse is reported. Each
 * app keeps its own schema (its variables, defaults and bounds) and is still the only place that reads
 * `process.env`; this package never does. How a URL is logged without its secrets is in `./mask.ts`.
 */
import { z } from 'zod';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What a wrong environment produces: one line per variable, naming it, never echoing a secret. */
export class ConfigError extends Error {
  readonly issues: string[];

  constructor(issues: string[]) {
    super(`invalid configuration:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** `FOO=` in a .env file means "not set", as it does for most tools. */
export const blankToUndefined = (value: unknown): unknown =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

export interface BoundedNumberOptions {
  /** Whole numbers only (default), or decimals such as `0.5`. */
  integer?: boolean;
  /**
   * What the format error calls the expected value: "must be <noun> between <min> and <max>". Default
   * `a whole number` for integers, `a number` for decimals.
   */
  noun?: string;
}

/**
 * A number in [min, max], `fallback` when unset or blank. Only plain digits are accepted (no sign, exponent or
 * hex), so `1e3` or `0x10` is an error rather than a surprise.
 */
export function boundedNumber(
  min: number,
  max: number,
  fallback: number,
  { integer = true, noun = integer ? 'a whole number' : 'a number' }: BoundedNumberOptions = {},
) {
  return z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(integer ? /^\d+$/ : /^\d+(\.\d+)?$/, { error: `must be ${noun} between ${min} and ${max}` })
      .transform(Number)
      .pipe(
        z
          .number()
          .min(min, { error: `must be at least ${min}` })
          .max(max, { error: `must be at most ${max}` }),
      )
      .default(fallback),
  );
}

/** Trimmed text, `fallback` when unset or blank. */
export const textOr = (fallback: string) =>
  z.preprocess(blankToUndefined, z.string().trim().default(fallback));

/** `LOG_LEVEL`: case-insensitive, `info` by default. */
export const logLevel = z.preprocess(
  (value) => (typeof value === 'string' ? blankToUndefined(value.trim().toLowerCase()) : value),
  z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
);

/** `DATABASE_URL`: required, postgres:// or postgresql://. */
export const databaseUrl = z.preprocess(
  blankToUndefined,
  z
    .string({ error: 'is required (a postgres:// connection string)' })
    .refine((value) => /^postgres(?:ql)?:\/\/./.test(value), {
      error: 'must be a postgres:// or postgresql:// connection string',
    }),
);

export const DATABASE_POOLERS = ['none', 'transaction'] as const;
export type DatabasePooler = (typeof DATABASE_POOLERS)[number];

/**
 * `DATABASE_POOLER`: `transaction` when DATABASE_URL goes through a transaction-mode pooler (PgBouncer, RDS
 * Proxy, Supabase's pooler); `none` (the default) for a direct connection or a session-mode pooler.
 */
export const databasePooler = z.preprocess(
  (value) => (typeof value === 'string' ? blankToUndefined(value.trim().toLowerCase()) : value),
  z.enum(DATABASE_POOLERS, { error: `must be one of ${DATABASE_POOLERS.join(', ')}` }).default('none'),
);

/** An optional http(s) URL (`ALERT_WEBHOOK_URL`). */
export const optionalHttpUrl = z.preprocess(
  blankToUndefined,
  z
    .string()
    .trim()
    .refine((value) => /^https?:\/\/./.test(value), { error: 'must be an http(s):// URL' })
    .optional(),
);

/**
 * The console's address as operators reach it (`CONSOLE_PUBLIC_URL`, e.g. `https://inbox.example.com/console`): an
 * http(s) URL with no query or fragment, kept without its trailing `/`, so alerts link to its pages. Unset: none.
 */
export const optionalConsoleUrl = z.preprocess(
  blankToUndefined,
  z
    .string()
    .trim()
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
      error: 'must be an http(s):// URL',
    })
    .refine((value) => !/[?#]/.test(value), { error: 'must have no query or fragment' })
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
);

/**
 * A variable parsed by `parse`, whose error message says what is wrong (less a leading `prefix` naming the variable,
 * which the configuration error names anyway); unset or blank: undefined.
 */
export const parsedBy = <T>(parse: (value: string) => T, prefix = '') =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .transform((value, ctx) => {
        try {
          return parse(value);
        } catch (error) {
          const message = (error as Error).message;
          ctx.addIssue({
            code: 'custom',
            message: message.startsWith(prefix) ? message.slice(prefix.length) : message,
          });
          return z.NEVER;
        }
      })
      .optional(),
  );

/**
 * Parses an environment against an app's schema; throws `ConfigError` listing every wrong variable at once
 * (`NAME message`). Messages come from the schema and never include the value.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map(
        (issue) => `${issue.path.map(String).join('.') || 'environment'} ${issue.message}`,
      ),
    );
  }
  return result.data;
}

import { maskUrl } from './mask.ts';

export { maskUrl };

/**
 * Whether the OpenTelemetry environment asks for traces: `OTEL_TRACES_EXPORTER` is set to something other than
 * `none`, or an OTLP endpoint is (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); and
 * `OTEL_SDK_DISABLED` is not `true`. Everything else about tracing (exporter, protocol, sampler, service name)
 * is the OpenTelemetry SDK's to read from the same standard variables.
 */
export function tracingEnabled(env: Record<string, string | undefined>): boolean {
  const set = (name: string) => (blankToUndefined(env[name]) as string | undefined)?.trim();
  if (set('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return false;
  const exporters = set('OTEL_TRACES_EXPORTER')
    ?.split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (exporters?.length === 1 && exporters[0] === 'none') return false;
  return (
    (exporters?.length ?? 0) > 0 ||
    set('OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined ||
    set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined
  );
}

/**
 * The variables every service reads the same way: its database, the pooler in front of it, its log level,
 * `NODE_ENV`, and where its alerts go with the console links they carry. The receiver's and the worker's schemas
 * spread them first; `serviceConfig` reads them back.
 */
export const SERVICE_VARIABLES = {
  DATABASE_URL: databaseUrl,
  DATABASE_POOLER: databasePooler,
  LOG_LEVEL: logLevel,
  NODE_ENV: textOr('development'),
  ALERT_WEBHOOK_URL: optionalHttpUrl,
  CONSOLE_PUBLIC_URL: optionalConsoleUrl,
};

/** The part of a service's configuration that `SERVICE_VARIABLES` and the OTEL_* environment give. */
export interface ServiceConfig {
  databaseUrl: string;
  /** `transaction`: DATABASE_URL goes through a transaction-mode pooler (PgBouncer, RDS Proxy). */
  databasePooler: DatabasePooler;
  logLevel: LogLevel;
  /** OpenTelemetry traces: on when the OTEL_* environment asks for them (`tracingEnabled`). */
  tracing: boolean;
  /** `NODE_ENV=production`: stricter defaults (required secrets, no development fallbacks). */
  production: boolean;
  /** `ALERT_WEBHOOK_URL`: where alerts are POSTed; undefined: alerts are logged only. */
  alertWebhookUrl: string | undefined;
  /** `CONSOLE_PUBLIC_URL`: the console's address, for the links alerts carry; undefined: no links. */
  consolePublicUrl: string | undefined;
}

/** `SERVICE_VARIABLES` as parsed, and the environment they were parsed from, as a `ServiceConfig`. */
export function serviceConfig(
  e: z.output<z.ZodObject<typeof SERVICE_VARIABLES>>,
  env: Record<string, string | undefined>,
): ServiceConfig {
  return {
    databaseUrl: e.DATABASE_URL,
    databasePooler: e.DATABASE_POOLER,
    logLevel: e.LOG_LEVEL,
    tracing: tracingEnabled(env),
    production: e.NODE_ENV === 'production',
    alertWebhookUrl: e.ALERT_WEBHOOK_URL,
    consolePublicUrl: e.CONSOLE_PUBLIC_URL,
  };
}

/** A `ServiceConfig` as it is safe to log: the database's URL without its password, no alert URL. */
export function describeService(config: ServiceConfig): Record<string, unknown> {
  return {
    database: maskUrl(config.databaseUrl),
    databasePooler: config.databasePooler,
    logLevel: config.logLevel,
    alerts: config.alertWebhookUrl ? 'webhook' : 'log only',
    tracing: config.tracing ? 'on' : 'off',
  };
}
