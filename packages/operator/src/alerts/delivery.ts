import { destinationEffect } from '@webhook-inbox/inbox/destinations';
import { errorLine } from '@webhook-inbox/inbox/error-text';
import {
  resolveAlerterOptions,
  type Alerter,
  type AlerterOptions,
  type AlerterStats,
  type AlertOutcome,
} from './alerter.ts';
import { alertExcerpt } from './excerpt.ts';
import {
  alertFingerprint,
  alertProvider,
  isDestinationAlert,
  isEventAlert,
  withoutPayload,
  type Alert,
} from './model.ts';
import { formatAlert, type Repeats } from './slack.ts';
import { postWithRetries, type PostPolicy } from './webhook-post.ts';

interface Queued {
  /** Without its payload: see `excerpt`. */
  alert: Alert;
  fingerprint: string;
  /** The payload excerpt (`alertExcerpt`), made once, when the alert was grouped. */
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

// notify() appends to an intake buffer at least this long (or ten times maxQueue) before it starts dropping.
const MIN_INTAKE = 2000;

/**
 * Sends operator alerts to a Slack-compatible incoming webhook, off the event-processing path.
 *
 * Grouping: alerts with one fingerprint (`alertFingerprint`) form a group. The first is sent at once; repeats
 * within `groupWindowMs` are counted, and when the window closes one summary goes out ("… and 99 more like
 * this"). So 100 failures in a minute give TWO messages: the first failure, then one summary with the count.
 * While repeats keep coming, each further window sends one summary; a window with none closes the group, and
 * the next occurrence is sent at once again.
 *
 * Payload: an event alert's excerpt (`alertExcerpt`, allow-listed fields only) is made once, when the alert is
 * taken in; queues and groups keep the alert without its payload.
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
  const resolved = resolveAlerterOptions(options);
  const { url, logger, groupWindowMs, maxQueue, maxAttempts, closeTimeoutMs, excerptLength } = resolved;
  const policy: PostPolicy = { ...resolved, fetch: options.fetch ?? globalThis.fetch };
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
      provider: alertProvider(alert),
      fingerprint: item.fingerprint,
    };
    if (isEventAlert(alert)) {
      Object.assign(base, { eventId: alert.eventId, type: alert.type, effect: alert.effect });
    }
    if (isDestinationAlert(alert))
      Object.assign(base, { destination: alert.destination, group: alert.group });
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

  function group(alert: Alert): void {
    const fingerprint = alertFingerprint(alert);
    const existing = groups.get(fingerprint);
    if (existing) {
      existing.count++;
      existing.total++;
      existing.last = withoutPayload(alert);
      counts.grouped++;
      return;
    }
    const timer = setTimeout(() => closeWindow(fingerprint), groupWindowMs);
    timer.unref();
    groups.set(fingerprint, { count: 0, total: 1, openedAt: new Date(), last: withoutPayload(alert), timer });
    if (queue.length >= maxQueue) {
      drop({ alert: alert.kind, provider: alertProvider(alert), fingerprint });
      return;
    }
    const excerpt =
      isEventAlert(alert) && alert.payload !== undefined ? alertExcerpt(alert, excerptLength) : undefined;
    queue.push({ alert: withoutPayload(alert), fingerprint, excerpt });
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

  function told(item: Queued, outcome: AlertOutcome['outcome'], headline: string): void {
    if (!options.onOutcome) return;
    const { alert } = item;
    const event = isEventAlert(alert) ? alert : undefined;
    // A destination's alert is recorded under its effect (`destination.<name>`), its kind saying the cause.
    const destination = isDestinationAlert(alert) ? destinationEffect(alert.destination) : undefined;
    try {
      options.onOutcome({
        service: options.service ?? 'webhook-inbox',
        kind: alert.kind,
        fingerprint: item.fingerprint,
        provider: alertProvider(alert),
        eventType: event?.type ?? null,
        effect: event?.effect ?? destination ?? null,
        eventId: event?.eventId ?? null,
        occurrences: item.repeats?.more ?? 1,
        outcome,
        headline,
      });
    } catch (error) {
      logger.error({ err: errorLine(error) }, 'alerter: onOutcome failed');
    }
  }

  async function deliver(item: Queued): Promise<void> {
    const outcome = await attempt(item);
    told(item, outcome.outcome, outcome.headline);
  }

  async function attempt(item: Queued): Promise<{ outcome: AlertOutcome['outcome']; headline: string }> {
    const dropped = droppedUnreported;
    const { plain, ...message } = formatAlert(item.alert, {
      service: options.service,
      consoleUrl: options.consoleUrl,
      excerpt: item.excerpt,
      repeats: item.repeats,
      dropped,
    });
    const firstLine = plain.split('\n')[0] ?? '';
    const headline = `alert: ${firstLine}`;
    if (!url) {
      logger.error({ ...logFields(item), message: plain }, headline);
      counts.sent++;
      droppedUnreported -= dropped;
      return { outcome: 'logged', headline: firstLine };
    }
    logger.warn(logFields(item), headline);
    const posted = await postWithRetries(url, JSON.stringify(message), policy, stopping.signal, () => {
      counts.retries++;
    });
    if (posted.outcome === 'sent') {
      counts.sent++;
      droppedUnreported -= dropped;
      return { outcome: 'sent', headline: firstLine };
    }
    counts.failed++;
    if (posted.outcome === 'refused') {
      logger.error(
        { ...logFields(item), status: posted.status },
        'alert refused by the webhook; not retrying',
      );
    } else {
      logger.error(
        { ...logFields(item), problem: posted.problem, message: plain },
        stopping.signal.aborted
          ? 'alert not delivered before shutdown'
          : `alert not delivered after ${maxAttempts} attempts`,
      );
    }
    return { outcome: 'failed', headline: firstLine };
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
        logger.error(
          { alert: alert.kind, provider: alertProvider(alert) },
          'alert after shutdown (not sent)',
        );
        return;
      }
      if (intake.length >= maxIntake) {
        drop({ alert: alert.kind, provider: alertProvider(alert) });
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
