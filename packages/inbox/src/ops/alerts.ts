import type { Logger } from 'pino';
import { errorLine } from '../error-text.ts';
import { maskString, redactExcerpt } from './redact.ts';

/** What the alerter needs from a pino logger. */
export type AlertLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

interface EventAlertBase {
  provider: string;
  /** The event key (`evt_...`; Shopify `shop:topic:id`). */
  eventId: string;
  /** Event type or topic. */
  type: string;
  /** The last error: an `Error` or a message. Masked and bounded before it leaves the process. */
  error: unknown;
  /** Attempts made so far, when known. */
  attempts?: number;
  /**
   * The event payload (parsed JSON, or its text), when at hand. Only a masked excerpt of bounded length is sent:
   * see `redactExcerpt`.
   */
  payload?: unknown;
}

/** The event's job ran out of retries: `webhook_events.status` is now `dead`. */
export interface EventDeadAlert extends EventAlertBase {
  kind: 'event_dead';
  /** The effect that failed last, when known. */
  effect?: string;
}

/** One effect of an event failed its last retry. */
export interface EffectFailedAlert extends EventAlertBase {
  kind: 'effect_failed';
  effect: string;
}

/** More signatures than usual were refused, e.g. a rotated secret that was not deployed (see the monitor). */
export interface SignatureFailuresAlert {
  kind: 'signature_failures';
  provider: string;
  /** Refusals counted in the window when the alert was raised. */
  count: number;
  threshold: number;
  windowMs: number;
}

/** Everything the alerter can be told about. */
export type Alert = EventDeadAlert | EffectFailedAlert | SignatureFailuresAlert;
export type AlertKind = Alert['kind'];

/** A Slack-compatible incoming-webhook body (also understood by Mattermost, Rocket.Chat, Discord `/slack`). */
export interface AlertMessage {
  text: string;
  blocks?: unknown[];
}

export interface AlerterOptions {
  /** Where to POST (`ALERT_WEBHOOK_URL`). Without it, alerts are only logged. */
  url?: string | undefined;
  logger: AlertLogger;
  /**
   * Repeats of one fingerprint within this window after its first occurrence are counted, not sent; when the
   * window closes they go out as one summary. Default 60 s.
   */
  groupWindowMs?: number;
  /** Injected for tests; defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Messages waiting to be sent, at most; beyond that new ones are dropped and counted. Default 200. */
  maxQueue?: number;
  /** Tries per message, the first included. Default 5. */
  maxAttempts?: number;
  /** First retry delay; doubled each retry, with jitter, up to `retryMaxDelayMs`. Default 1 s. */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** One POST may take this long before it is abandoned (and retried). Default 5 s. */
  requestTimeoutMs?: number;
  /** Default bound on `close()`. Default 5 s. */
  closeTimeoutMs?: number;
  /** Longest payload excerpt, in characters. Default 500. */
  excerptLength?: number;
  /** Names the sender in the message title. Default `webhook-inbox`. */
  service?: string;
}

/** Running totals, for metrics and tests. */
export interface AlerterStats {
  /** `notify()` calls accepted (including those grouped). */
  notified: number;
  /** Occurrences folded into a group instead of being sent on their own. */
  grouped: number;
  /** Messages delivered (POST answered 2xx), or logged when there is no URL. */
  sent: number;
  /** Messages given up on after their last attempt or refused with a 4xx. */
  failed: number;
  /** Messages dropped because the queue was full, or still queued when `close()` ran out of time. */
  dropped: number;
  /** Retried POSTs. */
  retries: number;
  /** Messages waiting. */
  queued: number;
}

export interface Alerter {
  /**
   * Records an alert and returns at once: never throws, never waits on the network. The first occurrence of a
   * fingerprint is queued for sending immediately; repeats within the group window are counted.
   */
  notify(alert: Alert): void;
  /**
   * Sends the summaries of open groups and waits for the queue to drain, at most `timeoutMs`; then abandons
   * what is left (logged). Later `notify()` calls are logged only. Resolves, never rejects.
   */
  close(options?: { timeoutMs?: number }): Promise<AlerterStats>;
  stats(): AlerterStats;
}

/** A repeat count attached to a summary message. */
interface Repeats {
  /** Occurrences in the window just closed (not counting the one already sent). */
  more: number;
  /** Occurrences since the group opened, the first included. */
  total: number;
  windowMs: number;
  since: Date;
}

interface Queued {
  /** Without its payload: see `excerpt`. */
  alert: Alert;
  fingerprint: string;
  /** The masked payload excerpt, made when the alert was grouped. */
  excerpt?: string;
  repeats?: Repeats;
}

interface Group {
  /** Occurrences in the current window not yet reported. */
  count: number;
  total: number;
  openedAt: Date;
  last: Alert;
  timer: NodeJS.Timeout;
}

const MAX_ERROR_LENGTH = 500;
// notify() appends to an intake buffer at least this long (or ten times maxQueue) before it starts dropping.
const MIN_INTAKE = 2000;
const TITLES: Record<AlertKind, string> = {
  event_dead: 'Event dead',
  effect_failed: 'Effect failed its last retry',
  signature_failures: 'Refused signatures above threshold',
};

/**
 * The error message with what varies between occurrences of one failure replaced by placeholders: emails,
 * UUIDs, provider ids (`evt_1Ab2...`), long hex strings, numbers.
 */
export function normalizeErrorMessage(message: string): string {
  return message
    .slice(0, MAX_ERROR_LENGTH)
    .replace(/[^\s@"<>(),;:]+@[^\s@"<>(),;:]+/g, '<email>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/\b[a-z]{2,12}(?:_(?:live|test))?_(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{6,}\b/g, '<id>')
    .replace(/\b(?:0x)?[0-9a-f]{12,}\b/gi, '<hex>')
    .replace(/\d+/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim();
}

/** What makes two alerts "the same problem": kind, provider, type, effect and the normalized error. */
export function alertFingerprint(alert: Alert): string {
  if (alert.kind === 'signature_failures') return `${alert.kind}|${alert.provider}`;
  const effect = alert.effect ?? '';
  return [alert.kind, alert.provider, alert.type, effect, normalizeErrorMessage(errorLine(alert.error))].join(
    '|',
  );
}

/** Quotes an argument for a POSIX shell when it needs it. */
function shellArg(value: string): string {
  return /^[A-Za-z0-9_.:/@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The exact command that re-runs the event's unfinished effects. */
export function replayCommand(provider: string, eventId: string): string {
  return `pnpm inbox replay ${shellArg(provider)} ${shellArg(eventId)}`;
}

function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function codeBlock(text: string): string {
  return `\`\`\`${escapeMrkdwn(text.replace(/```/g, "'''"))}\`\`\``;
}

function formatWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Renders one alert (or a group summary) as a Slack message. `text` carries every field on its own (it is what
 * notifications and non-Slack receivers show); `blocks` lays the same out for Slack.
 */
export function formatAlert(
  alert: Alert,
  options: {
    service?: string;
    excerptLength?: number;
    /** A payload excerpt already made (`redactExcerpt`), instead of one made here from `alert.payload`. */
    excerpt?: string;
    repeats?: Repeats;
    dropped?: number;
  } = {},
): AlertMessage & { plain: string } {
  const service = options.service ?? 'webhook-inbox';
  const repeats = options.repeats;
  const lines: string[] = [];
  const fields: Array<[string, string]> = [];
  let error: string | undefined;
  let excerpt = options.excerpt;
  let command: string | undefined;
  let subject: string;

  if (alert.kind === 'signature_failures') {
    subject = `${alert.provider}: ${alert.count} refused signatures in ${formatWindow(alert.windowMs)} (threshold ${alert.threshold})`;
    fields.push(['Provider', alert.provider], ['Refused', String(alert.count)]);
    lines.push(
      `Check the webhook secret configured for ${alert.provider}: a rotated secret not yet deployed, or a new endpoint secret, refuses every delivery.`,
    );
  } else {
    subject = `${alert.provider} ${alert.type} ${alert.eventId}${alert.effect ? ` (${alert.effect})` : ''}`;
    fields.push(['Provider', alert.provider], ['Event key', alert.eventId], ['Type', alert.type]);
    if (alert.effect) fields.push(['Effect', alert.effect]);
    if (alert.attempts !== undefined) fields.push(['Attempts', String(alert.attempts)]);
    error = bounded(maskString(errorLine(alert.error)), MAX_ERROR_LENGTH);
    if (excerpt === undefined && alert.payload !== undefined) {
      excerpt = redactExcerpt(alert.payload, options.excerptLength ?? 500);
    }
    command = replayCommand(alert.provider, alert.eventId);
  }

  let title = `[${service}] ${TITLES[alert.kind]}: ${subject}`;
  let repeatLine: string | undefined;
  if (repeats) {
    title = `[${service}] ${TITLES[alert.kind]}: … and ${repeats.more} more like this`;
    repeatLine =
      `… and ${repeats.more} more like this in ${formatWindow(repeats.windowMs)} ` +
      `(${repeats.total} in total since ${repeats.since.toISOString()}). Latest: ${subject}`;
  }

  const text = [
    title,
    ...(repeatLine ? [repeatLine] : []),
    ...fields.map(([name, value]) => `${name.toLowerCase()}: ${value}`),
    ...(error !== undefined ? [`error: ${error}`] : []),
    ...(command ? [`replay: ${command}`] : []),
    ...(repeats && alert.kind !== 'signature_failures'
      ? [
          `list: pnpm inbox events --provider ${shellArg(alert.provider)} --status ${alert.kind === 'event_dead' ? 'dead' : 'failed'} --since 1h`,
        ]
      : []),
    ...lines,
    ...(excerpt !== undefined ? [`payload (redacted): ${excerpt}`] : []),
    ...(options.dropped
      ? [`(${options.dropped} alerts dropped since the last one delivered: alert queue full)`]
      : []),
  ].join('\n');

  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: bounded(title, 150), emoji: false } },
  ];
  if (repeatLine) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(repeatLine) } });
  blocks.push({
    type: 'section',
    fields: fields.map(([name, value]) => ({ type: 'mrkdwn', text: `*${name}*\n${escapeMrkdwn(value)}` })),
  });
  if (error !== undefined)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*Error*\n${codeBlock(error)}` } });
  if (command) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*Replay*\n${codeBlock(command)}` } });
  }
  for (const line of lines)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(line) } });
  if (excerpt !== undefined) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*Payload (redacted)*\n${codeBlock(excerpt)}` },
    });
  }
  if (options.dropped) {
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `${options.dropped} alerts dropped since the last one delivered: alert queue full`,
        },
      ],
    });
  }
  return { text: escapeMrkdwn(text), blocks, plain: text };
}

function positive(name: string, value: number, integer = false): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `createAlerter: ${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`,
    );
  }
  return value;
}

/** Resolves after `ms`, or at once when `signal` aborts. The timer never keeps the process alive. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}

function retryAfterMs(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Sends operator alerts to a Slack-compatible incoming webhook, off the event-processing path.
 *
 * Grouping: alerts with one fingerprint (`alertFingerprint`) form a group. The first is sent at once; repeats
 * within `groupWindowMs` are counted, and when the window closes one summary goes out ("… and 99 more like
 * this"). So 100 failures in a minute give TWO messages: the first failure, then one summary with the count.
 * While repeats keep coming, each further window sends one summary; a window with none closes the group, and
 * the next occurrence is sent at once again.
 *
 * Delivery: one message at a time from a bounded in-memory queue (full: dropped, counted, and mentioned in the
 * next message sent), each POST retried on a network error, a timeout, 429 or 5xx, with exponential backoff and
 * jitter (honouring `Retry-After`), at most `maxAttempts` times. Every alert is also logged. Without a URL
 * alerts are only logged.
 *
 * @example
 * const alerter = createAlerter({ url: env.ALERT_WEBHOOK_URL, logger });
 * alerter.notify({ kind: 'effect_failed', provider, eventId, type, effect: 'send-welcome-email', error, payload });
 * // on shutdown
 * await alerter.close();
 */
export function createAlerter(options: AlerterOptions): Alerter {
  const { url, logger } = options;
  const groupWindowMs = positive('groupWindowMs', options.groupWindowMs ?? 60_000);
  const maxQueue = positive('maxQueue', options.maxQueue ?? 200, true);
  const maxAttempts = positive('maxAttempts', options.maxAttempts ?? 5, true);
  const retryBaseDelayMs = positive('retryBaseDelayMs', options.retryBaseDelayMs ?? 1000);
  const retryMaxDelayMs = positive('retryMaxDelayMs', options.retryMaxDelayMs ?? 15_000);
  const requestTimeoutMs = positive('requestTimeoutMs', options.requestTimeoutMs ?? 5000);
  const closeTimeoutMs = options.closeTimeoutMs ?? 5000;
  const excerptLength = options.excerptLength ?? 500;
  const doFetch = options.fetch ?? globalThis.fetch;
  const maxIntake = Math.max(MIN_INTAKE, maxQueue * 10);

  // notify() only appends here; grouping, excerpts and timers happen on the next turn of the event loop.
  const intake: Alert[] = [];
  const groups = new Map<string, Group>();
  const queue: Queued[] = [];
  const stopping = new AbortController();
  const counts = { notified: 0, grouped: 0, sent: 0, failed: 0, dropped: 0, retries: 0 };
  let droppedUnreported = 0;
  let closed = false;
  let draining: Promise<void> | undefined;
  let scheduled = false;

  const stats = (): AlerterStats => ({ ...counts, queued: queue.length + intake.length });

  function logFields(item: Queued): Record<string, unknown> {
    const { alert } = item;
    const base: Record<string, unknown> = {
      alert: alert.kind,
      provider: alert.provider,
      fingerprint: item.fingerprint,
    };
    if (alert.kind !== 'signature_failures') {
      Object.assign(base, { eventId: alert.eventId, type: alert.type, effect: alert.effect });
    }
    if (item.repeats) Object.assign(base, { repeats: item.repeats.more, total: item.repeats.total });
    return base;
  }

  function drop(fields: Record<string, unknown>): void {
    counts.dropped++;
    if (droppedUnreported++ === 0) logger.warn({ ...fields, maxQueue }, 'alert queue full: dropping alerts');
  }

  function enqueue(item: Queued): void {
    if (queue.length >= maxQueue) {
      drop(logFields(item));
      return;
    }
    queue.push(item);
  }

  /** The alert without its payload: a queued or grouped alert keeps no reference to a (possibly large) body. */
  function strip(alert: Alert): Alert {
    return alert.kind === 'signature_failures' || alert.payload === undefined
      ? alert
      : { ...alert, payload: undefined };
  }

  function group(alert: Alert): void {
    const fingerprint = alertFingerprint(alert);
    const existing = groups.get(fingerprint);
    if (existing) {
      existing.count++;
      existing.total++;
      existing.last = strip(alert);
      counts.grouped++;
      return;
    }
    const timer = setTimeout(() => closeWindow(fingerprint), groupWindowMs);
    timer.unref();
    groups.set(fingerprint, { count: 0, total: 1, openedAt: new Date(), last: strip(alert), timer });
    if (queue.length >= maxQueue) {
      drop({ alert: alert.kind, provider: alert.provider, fingerprint });
      return;
    }
    const excerpt =
      alert.kind !== 'signature_failures' && alert.payload !== undefined
        ? redactExcerpt(alert.payload, excerptLength)
        : undefined;
    queue.push({ alert: strip(alert), fingerprint, excerpt });
  }

  function takeIntake(): void {
    for (const alert of intake.splice(0)) {
      try {
        group(alert);
      } catch (error) {
        logger.error({ err: errorLine(error) }, 'alerter: could not process an alert');
      }
    }
  }

  // One pump per turn of the event loop: fold the intake into groups, then make sure the sender runs. Never on the
  // caller's stack, so notify() costs an array push.
  function schedule(): void {
    if (scheduled || stopping.signal.aborted) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      takeIntake();
      if (draining || queue.length === 0 || stopping.signal.aborted) return;
      draining = drain()
        .catch((error: unknown) => logger.error({ err: errorLine(error) }, 'alert sender failed'))
        .finally(() => {
          draining = undefined;
          if (queue.length > 0 || intake.length > 0) schedule();
        });
    });
  }

  async function drain(): Promise<void> {
    for (let item = queue.shift(); item; item = queue.shift()) {
      await deliver(item);
      if (stopping.signal.aborted) return;
      takeIntake();
    }
  }

  async function deliver(item: Queued): Promise<void> {
    const dropped = droppedUnreported;
    const { plain, ...message } = formatAlert(item.alert, {
      service: options.service,
      excerpt: item.excerpt,
      repeats: item.repeats,
      dropped,
    });
    const headline = `alert: ${plain.split('\n')[0] ?? ''}`;
    if (!url) {
      logger.error({ ...logFields(item), message: plain }, headline);
      counts.sent++;
      droppedUnreported -= dropped;
      return;
    }
    logger.warn(logFields(item), headline);
    const body = JSON.stringify(message);
    let lastProblem = '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      let delay =
        Math.min(retryMaxDelayMs, retryBaseDelayMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      try {
        const response = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.any([AbortSignal.timeout(requestTimeoutMs), stopping.signal]),
        });
        await response.arrayBuffer().catch(() => undefined);
        if (response.ok) {
          counts.sent++;
          droppedUnreported -= dropped;
          return;
        }
        lastProblem = `HTTP ${response.status}`;
        if (response.status !== 429 && response.status < 500) {
          counts.failed++;
          logger.error(
            { ...logFields(item), status: response.status },
            'alert refused by the webhook; not retrying',
          );
          return;
        }
        const wait = retryAfterMs(response);
        if (wait !== undefined) delay = Math.min(retryMaxDelayMs, wait);
      } catch (error) {
        lastProblem = errorLine(error);
      }
      if (stopping.signal.aborted || attempt === maxAttempts) break;
      counts.retries++;
      await pause(delay, stopping.signal);
    }
    counts.failed++;
    logger.error(
      { ...logFields(item), problem: lastProblem, message: plain },
      stopping.signal.aborted
        ? 'alert not delivered before shutdown'
        : `alert not delivered after ${maxAttempts} attempts`,
    );
  }

  function summary(fingerprint: string, group: Group): Queued {
    return {
      alert: group.last,
      fingerprint,
      repeats: { more: group.count, total: group.total, windowMs: groupWindowMs, since: group.openedAt },
    };
  }

  function closeWindow(fingerprint: string): void {
    takeIntake();
    const group = groups.get(fingerprint);
    if (!group) return;
    if (group.count === 0) {
      groups.delete(fingerprint);
      return;
    }
    enqueue(summary(fingerprint, group));
    schedule();
    // Still failing: keep the group open for another window, so a steady stream yields one summary per window.
    group.count = 0;
    group.timer = setTimeout(() => closeWindow(fingerprint), groupWindowMs);
    group.timer.unref();
  }

  function notify(alert: Alert): void {
    try {
      counts.notified++;
      if (closed) {
        logger.error({ alert: alert.kind, provider: alert.provider }, 'alert after shutdown (not sent)');
        return;
      }
      if (intake.length >= maxIntake) {
        drop({ alert: alert.kind, provider: alert.provider });
        return;
      }
      intake.push(alert);
      schedule();
    } catch (error) {
      try {
        logger.error({ err: errorLine(error) }, 'alerter: notify failed');
      } catch {
        // Nothing left to tell; the caller must not be disturbed.
      }
    }
  }

  async function close({ timeoutMs = closeTimeoutMs }: { timeoutMs?: number } = {}): Promise<AlerterStats> {
    if (!closed) {
      closed = true;
      takeIntake();
      for (const [fingerprint, group] of groups) {
        clearTimeout(group.timer);
        if (group.count > 0) enqueue(summary(fingerprint, group));
      }
      groups.clear();
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, timeoutMs));
    });
    const drained = (async () => {
      while (!stopping.signal.aborted && (queue.length > 0 || draining || scheduled)) {
        schedule();
        await (draining ?? new Promise((resolve) => setImmediate(resolve)));
      }
    })();
    await Promise.race([drained, deadline]);
    clearTimeout(timer);
    stopping.abort();
    await draining;
    await drained;
    for (const item of queue.splice(0)) {
      counts.dropped++;
      logger.error(logFields(item), 'alert not delivered before shutdown');
    }
    return stats();
  }

  return { notify, close, stats };
}

export interface SignatureFailureMonitorOptions {
  alerter: Pick<Alerter, 'notify'>;
  /** Alert when MORE than this many refusals fall within one window. */
  threshold: number;
  /** Default 60 s. */
  windowMs?: number;
  /** Injected clock (ms since epoch), for tests. */
  now?: () => number;
}

export interface SignatureFailureMonitor {
  /** Counts one refused signature (`missing_signature`, `invalid_signature`, `timestamp_out_of_tolerance`). */
  record(provider: string): void;
}

/**
 * Watches refused signatures per provider over a sliding window and raises one `signature_failures` alert when
 * they exceed `threshold`, then stays quiet for that provider for one window. A sudden jump usually means a
 * secret was rotated at the provider but not deployed here. O(threshold) memory per provider; `record` is cheap
 * and never throws.
 *
 * @example
 * const monitor = createSignatureFailureMonitor({ alerter, threshold: 20, windowMs: 60_000 });
 * // in the receiver, when verify() throws a signature error:
 * monitor.record('stripe');
 */
export function createSignatureFailureMonitor(
  options: SignatureFailureMonitorOptions,
): SignatureFailureMonitor {
  const { alerter, threshold } = options;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  if (!Number.isInteger(threshold) || threshold < 0) {
    throw new RangeError(
      `createSignatureFailureMonitor: threshold must be an integer >= 0, got ${threshold}`,
    );
  }
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError(
      `createSignatureFailureMonitor: windowMs must be a positive number, got ${windowMs}`,
    );
  }
  // Per provider: the times of the latest threshold + 1 refusals (all that is needed to know "more than
  // threshold within the window"), and until when the provider is quiet after an alert.
  const state = new Map<string, { times: number[]; quietUntil: number }>();

  return {
    record(provider: string): void {
      try {
        const t = now();
        let entry = state.get(provider);
        if (!entry) {
          entry = { times: [], quietUntil: 0 };
          state.set(provider, entry);
        }
        const { times } = entry;
        times.push(t);
        if (times.length > threshold + 1) times.shift();
        while (times.length > 0 && (times[0] ?? t) <= t - windowMs) times.shift();
        if (times.length > threshold && t >= entry.quietUntil) {
          entry.quietUntil = t + windowMs;
          alerter.notify({ kind: 'signature_failures', provider, count: times.length, threshold, windowMs });
        }
      } catch {
        // Monitoring must never disturb the request that was refused.
      }
    },
  };
}
