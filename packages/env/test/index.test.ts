import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  blankToUndefined,
  boundedNumber,
  ConfigError,
  databasePooler,
  databaseUrl,
  maskUrl,
  logLevel,
  optionalHttpUrl,
  parseEnv,
  textOr,
  tracingEnabled,
} from '../src/index.ts';

function issuesOf(schema: z.ZodType, env: Record<string, string | undefined>): string[] {
  try {
    parseEnv(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('shared configuration helpers', () => {
  it('treats blank values as unset', () => {
    expect(blankToUndefined('')).toBeUndefined();
    expect(blankToUndefined(' \t\n')).toBeUndefined();
    expect(blankToUndefined(' x ')).toBe(' x ');
    expect(blankToUndefined(undefined)).toBeUndefined();
    const schema = z.object({ HOST: textOr('127.0.0.1') });
    expect(parseEnv(schema, { HOST: '  ' })).toEqual({ HOST: '127.0.0.1' });
    expect(parseEnv(schema, { HOST: ' 0.0.0.0\n' })).toEqual({ HOST: '0.0.0.0' });
  });

  it('reads bounded whole numbers: default, trimmed digits, bounds', () => {
    const schema = z.object({ N: boundedNumber(1, 10, 5) });
    expect(parseEnv(schema, {})).toEqual({ N: 5 });
    expect(parseEnv(schema, { N: '' })).toEqual({ N: 5 });
    expect(parseEnv(schema, { N: ' 7 ' })).toEqual({ N: 7 });
    expect(parseEnv(schema, { N: '10' })).toEqual({ N: 10 });
    expect(issuesOf(schema, { N: '0' })).toEqual(['N must be at least 1']);
    expect(issuesOf(schema, { N: '11' })).toEqual(['N must be at most 10']);
    for (const wrong of ['1.5', '-1', '1e1', '0x5', 'five']) {
      expect(issuesOf(schema, { N: wrong }), wrong).toEqual(['N must be a whole number between 1 and 10']);
    }
  });

  it('reads decimals when asked, and words the format error as told', () => {
    const schema = z.object({
      SECONDS: boundedNumber(0.5, 60, 0.5, { integer: false }),
      PORT: boundedNumber(0, 65_535, 3001, { noun: 'a number' }),
    });
    expect(parseEnv(schema, { SECONDS: '2.25' })).toEqual({ SECONDS: 2.25, PORT: 3001 });
    expect(issuesOf(schema, { SECONDS: '0.1', PORT: 'http' })).toEqual([
      'SECONDS must be at least 0.5',
      'PORT must be a number between 0 and 65535',
    ]);
    expect(issuesOf(schema, { SECONDS: '.5' })).toEqual(['SECONDS must be a number between 0.5 and 60']);
  });

  it('reads log levels case-insensitively, info by default', () => {
    const schema = z.object({ LOG_LEVEL: logLevel });
    expect(parseEnv(schema, {})).toEqual({ LOG_LEVEL: 'info' });
    expect(parseEnv(schema, { LOG_LEVEL: ' DEBUG ' })).toEqual({ LOG_LEVEL: 'debug' });
    expect(issuesOf(schema, { LOG_LEVEL: 'loud' })).toEqual([
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('requires a postgres URL and checks optional http(s) URLs', () => {
    const schema = z.object({ DATABASE_URL: databaseUrl, ALERT_WEBHOOK_URL: optionalHttpUrl });
    expect(issuesOf(schema, { DATABASE_URL: ' ', ALERT_WEBHOOK_URL: 'ftp://x' })).toEqual([
      'DATABASE_URL is required (a postgres:// connection string)',
      'ALERT_WEBHOOK_URL must be an http(s):// URL',
    ]);
    expect(issuesOf(schema, { DATABASE_URL: 'mysql://db/x' })).toEqual([
      'DATABASE_URL must be a postgres:// or postgresql:// connection string',
    ]);
    expect(parseEnv(schema, { DATABASE_URL: 'postgresql://db/x', ALERT_WEBHOOK_URL: '' })).toEqual({
      DATABASE_URL: 'postgresql://db/x',
      ALERT_WEBHOOK_URL: undefined,
    });
  });

  it('reads the pooler kind, none by default', () => {
    const schema = z.object({ DATABASE_POOLER: databasePooler });
    expect(parseEnv(schema, {})).toEqual({ DATABASE_POOLER: 'none' });
    expect(parseEnv(schema, { DATABASE_POOLER: ' Transaction ' })).toEqual({
      DATABASE_POOLER: 'transaction',
    });
    expect(issuesOf(schema, { DATABASE_POOLER: 'pgbouncer' })).toEqual([
      'DATABASE_POOLER must be one of none, transaction',
    ]);
  });

  it('lists every wrong variable in one ConfigError, without their values', () => {
    const schema = z.object({ A: boundedNumber(1, 2, 1), B: databaseUrl });
    let error: unknown;
    try {
      parseEnv(schema, { A: 'do_not_print_me', B: 'do_not_print_me_either' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.name).toBe('ConfigError');
    expect(configError.issues).toEqual([
      'A must be a whole number between 1 and 2',
      'B must be a postgres:// or postgresql:// connection string',
    ]);
    expect(configError.message).toBe(
      'invalid configuration:\n  - A must be a whole number between 1 and 2\n  - B must be a postgres:// or postgresql:// connection string',
    );
    expect(configError.message).not.toContain('do_not_print_me');
  });

  it('masks a URL from its parsed parts: the whole user info and secret-looking query parameters', () => {
    expect(maskUrl('postgres://user:secret@db:5432/inbox')).toBe('postgres://***@db:5432/inbox');
    // A password containing `@` (or `:`): the URL parser finds the real host; a pattern over the text did not.
    expect(maskUrl('postgres://user:p@ss@host:5432/db')).toBe('postgres://***@host:5432/db');
    expect(maskUrl('postgres://user:p%40ss:w@host/db')).toBe('postgres://***@host/db');
    expect(maskUrl('postgres://u@h/db?password=hunter2')).toBe('postgres://***@h/db?password=***');
    expect(maskUrl('postgres://h/db?sslmode=require&sslpassword=k&application_name=app')).toBe(
      'postgres://h/db?sslmode=require&sslpassword=***&application_name=app',
    );
    expect(maskUrl('smtps://apikey:SG.key@smtp.example:465')).toBe('smtps://***@smtp.example:465');
    expect(maskUrl('smtp://smtp.example:587?token=t&api_key=k&secret=s&authToken=a')).toBe(
      'smtp://smtp.example:587?token=***&api_key=***&secret=***&authToken=***',
    );
    expect(maskUrl('postgres://db:5432/inbox')).toBe('postgres://db:5432/inbox');
    expect(maskUrl('postgres://u:pw@db/inbox#pw')).toBe('postgres://***@db/inbox');
    expect(maskUrl('postgres//u:pw@db')).toBe('[unparseable URL hidden]');
    expect(maskUrl('postgres:u:pw@db')).toBe('postgres:[unparseable URL hidden]');
  });
});

describe('tracingEnabled', () => {
  it('is on when an exporter or an OTLP endpoint is set, off by default, with none, or when the SDK is disabled', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_SERVICE_NAME: 'inbox' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(
      tracingEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toBe(false);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: ' ' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBe(
      false,
    );
  });
});
