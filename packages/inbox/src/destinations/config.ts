/**
 * The destinations file (`WEBHOOK_DESTINATIONS_FILE`, beside the sources file): where the inbox forwards its
 * verified, deduplicated events over HTTP. Parsed and validated once, at start-up; every mistake is reported with
 * the destination and the field, never a secret.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, YAMLError } from 'yaml';
import { z } from 'zod';
import { GROUP_NAME_RULE, isGroupName, DEFAULT_GROUP } from '../queue.ts';

/** Svix's schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (seconds before each attempt). */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [
  0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000,
];

/** One selector of the events a destination receives. */
export interface EventSelector {
  /** A source name (the events' `provider`), or `*` for every source. */
  source: string;
  /** Event types; `*` matches any run of characters (`invoice.*`, `*`). */
  types: readonly string[];
}

/** A JSON pointer into the event's body, and what must be there. */
export type BodyFilter = { pointer: string; equals: unknown } | { pointer: string; exists: boolean };

export interface Destination {
  /** 1-40 of `a-z0-9_-`, a letter first: the queue `webhook-destination.<name>`, the effect `destination.<name>`. */
  name: string;
  url: URL;
  events: readonly EventSelector[];
  filter: BodyFilter | undefined;
  /** The consumer group whose worker fans events out to it (its replays are that group's). */
  group: string;
  timeoutMs: number;
  /** Seconds to wait before each attempt: the first is the first attempt's (0: at once). */
  retrySchedule: readonly number[];
  /** Deliveries started per second, across every worker of the destination; undefined: unlimited. */
  rateLimit: number | undefined;
  /** Deliveries in flight at once, across every worker of the destination. */
  concurrency: number;
  headers: Readonly<Record<string, string>>;
  /** `raw`: the provider's body as recorded; `envelope`: `{provider, type, key, receivedAt, payload}`. */
  body: 'raw' | 'envelope';
  /** Standard Webhooks secrets (`whsec_<base64>`), decoded; every one signs (rotation), the first is current. */
  secrets: readonly Buffer[];
  /** Private, loopback and link-local addresses are refused unless this is set. */
  allowPrivateNetwork: boolean;
  /** Failed deliveries in a row that open the circuit, and how long it stays open before a probe. */
  breaker: { failures: number; probeAfterMs: number };
}

/** A destinations file that cannot be used: one line per mistake, each naming the destination and the field. */
export class DestinationsFileError extends Error {
  readonly code = 'invalid_destinations_file';
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[]) {
    super(`${path.basename(file)}: ${problems.join('; ')}`);
    this.name = 'DestinationsFileError';
    this.problems = problems.map((problem) => `${path.basename(file)}: ${problem}`);
  }
}

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 };

/** `5`, `5s`, `5m`, `2h`: seconds. */
const duration = z.union([z.number().nonnegative(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number') return value;
  const match = DURATION.exec(value.trim());
  if (!match) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration (5, 5s, 5m, 2h)` });
    return z.NEVER;
  }
  return Number(match[1]) * (UNIT_SECONDS[match[2] ?? 's'] ?? 1);
});

const POINTER = /^(\/([^~/]|~[01])*)*$/;
const pointer = z.string().regex(POINTER, 'must be a JSON pointer (RFC 6901): "" or "/a/b"');
const pattern = z.string().min(1).max(200);

const selector = z
  .object({
    source: z
      .string()
      .regex(/^(\*|[a-z0-9][a-z0-9-]*)$/, 'must be a source name or *')
      .default('*'),
    types: z.array(pattern).min(1).default(['*']),
  })
  .strict();

const filter = z.union([
  z.object({ pointer, equals: z.unknown() }).strict(),
  z.object({ pointer, exists: z.boolean() }).strict(),
]);

const RESERVED_HEADERS = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
]);

const secret = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be a Standard Webhooks secret, whsec_ and base64')
  .transform((value) => Buffer.from(value.slice('whsec_'.length), 'base64'))
  .refine((bytes) => bytes.length >= 24, 'must hold at least 24 bytes (whsec_ and 32+ base64 characters)');

const destination = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }),
    events: z.array(selector).min(1),
    filter: filter.optional(),
    group: z
      .string()
      .refine(isGroupName, `must be a consumer group name: ${GROUP_NAME_RULE}`)
      .default(DEFAULT_GROUP),
    timeout: duration.pipe(z.number().min(0.1).max(300)).default(15),
    retrySchedule: z
      .array(duration)
      .min(1)
      .max(50)
      .default([...DEFAULT_RETRY_SCHEDULE_SECONDS]),
    rateLimit: z.number().positive().max(100_000).optional(),
    concurrency: z.number().int().min(1).max(1000).default(10),
    headers: z
      .record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a header name'), z.string())
      .refine(
        (headers) => Object.keys(headers).every((name) => !RESERVED_HEADERS.has(name.toLowerCase())),
        `may not set ${[...RESERVED_HEADERS].join(', ')}: the delivery sets them`,
      )
      .default({}),
    body: z.enum(['raw', 'envelope']).default('envelope'),
    secrets: z.array(secret).default([]),
    secretFiles: z.array(z.string().min(1)).default([]),
    allowPrivateNetwork: z.boolean().default(false),
    breaker: z
      .object({
        failures: z.number().int().min(1).max(10_000).default(10),
        probeAfter: duration.pipe(z.number().min(1).max(86_400)).default(60),
      })
      .strict()
      .default({ failures: 10, probeAfter: 60 }),
  })
  .strict();

const file = z
  .object({
    destinations: z.record(z.string(), destination),
  })
  .strict();

/**
 * Parses a destinations file's text (YAML, or JSON when the name ends in `.json`). Throws `DestinationsFileError`,
 * each problem naming the destination and the field.
 */
export function parseDestinations(text: string, fileName: string): Destination[] {
  let raw: unknown;
  if (fileName.endsWith('.json')) {
    try {
      raw = JSON.parse(text);
    } catch (error) {
      // V8's message quotes the input: its position only.
      const position = /at position \d+/.exec((error as Error).message)?.[0] ?? 'unreadable';
      throw new DestinationsFileError(fileName, [`is not valid JSON: ${position}`]);
    }
  } else {
    try {
      raw = parseYaml(text);
    } catch (error) {
      // The position and the parser's code, never its message: it quotes the line, which may hold a secret.
      const [at] = error instanceof YAMLError ? (error.linePos ?? []) : [];
      const where = at ? `line ${at.line}, column ${at.col}` : 'unreadable';
      const code = error instanceof YAMLError ? ` (${error.code})` : '';
      throw new DestinationsFileError(fileName, [`is not valid YAML: ${where}${code}`]);
    }
  }
  const parsed = file.safeParse(raw);
  const badNames = Object.keys((raw as { destinations?: unknown } | null)?.destinations ?? {}).filter(
    (name) => !isGroupName(name),
  );
  const nameProblems = badNames.map(
    (name) => `destination "${name}": name: must be ${GROUP_NAME_RULE} (it names a queue and an effect)`,
  );
  if (!parsed.success || nameProblems.length > 0) {
    const issues = parsed.success ? [] : parsed.error.issues;
    throw new DestinationsFileError(fileName, [
      ...nameProblems,
      ...issues.map((issue) => {
        const [top, name, ...field] = issue.path.map(String);
        if (top !== 'destinations' || name === undefined)
          return `${issue.path.join('.') || 'file'}: ${issue.message}`;
        return `destination "${name}": ${field.join('.') || 'name'}: ${issue.message}`;
      }),
    ]);
  }
  const problems: string[] = [];
  const destinations = Object.entries(parsed.data.destinations).map(([name, spec]) => {
    const secrets = [...spec.secrets];
    for (const [index, secretFile] of spec.secretFiles.entries()) {
      try {
        const text = readFileSync(path.resolve(path.dirname(fileName), secretFile), 'utf8').trim();
        const decoded = secret.safeParse(text);
        if (decoded.success) secrets.push(decoded.data);
        else
          problems.push(`destination "${name}": secretFiles.${index}: ${decoded.error.issues[0]?.message}`);
      } catch (error) {
        problems.push(
          `destination "${name}": secretFiles.${index}: cannot be read (${(error as NodeJS.ErrnoException).code})`,
        );
      }
    }
    if (secrets.length === 0 && problems.length === 0) {
      problems.push(
        `destination "${name}": secrets: at least one signing secret is required (secrets or secretFiles)`,
      );
    }
    return {
      name,
      url: new URL(spec.url),
      events: spec.events,
      filter: spec.filter,
      group: spec.group,
      timeoutMs: Math.round(spec.timeout * 1000),
      retrySchedule: spec.retrySchedule,
      rateLimit: spec.rateLimit,
      concurrency: spec.concurrency,
      headers: spec.headers,
      body: spec.body,
      secrets,
      allowPrivateNetwork: spec.allowPrivateNetwork,
      breaker: { failures: spec.breaker.failures, probeAfterMs: Math.round(spec.breaker.probeAfter * 1000) },
    } satisfies Destination;
  });
  if (problems.length > 0) throw new DestinationsFileError(fileName, problems);
  return destinations;
}

/** Reads and parses the destinations file at `file`. */
export function loadDestinationsFile(file: string): Destination[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new DestinationsFileError(file, [`cannot be read (${(error as NodeJS.ErrnoException).code})`]);
  }
  return parseDestinations(text, file);
}
