import { errorLine } from '@webhook-inbox/inbox/error-text';
import { EMAIL } from '../redact.ts';

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
  /** The consumer group whose worker gave up, when it is not the default group. */
  group?: string;
  /**
   * The event payload (parsed JSON, or its text), when at hand. Only an excerpt of allowed fields is sent: see
   * `alertExcerpt`.
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
  /** Refusals counted in the window: all of them when `complete`, else those counted when the alert was raised. */
  count: number;
  threshold: number;
  windowMs: number;
  /** When the window opened. */
  since: Date;
  /** True once the window has closed: `count` is its total. */
  complete: boolean;
}

/**
 * A destination's episode (docs/destinations.md#alerts): its circuit opened, it was paused (a 410 Gone or an
 * operator), or its recent failure rate reached the threshold. Raised once per episode by the destination monitor.
 */
export interface DestinationAlert {
  kind: 'destination_open' | 'destination_paused' | 'destination_failure_rate';
  destination: string;
  /** The consumer group whose workers deliver to it. */
  group: string;
  /**
   * Why: the state's reason (`10 failures in a row, the last: HTTP 503`, `410 Gone from <origin>`, `paused by
   * <actor>`), or the failure rate's figures and its most frequent error.
   */
  cause: string;
}

/** Everything the alerter can be told about. */
export type Alert = EventDeadAlert | EffectFailedAlert | SignatureFailuresAlert | DestinationAlert;
export type AlertKind = Alert['kind'];

export const MAX_ERROR_LENGTH = 500;

/**
 * What varies between occurrences of one failure, in the order it is replaced: emails, UUIDs (GitHub's delivery
 * GUIDs among them), GitHub node ids (`PR_kwDOAbCd`, the legacy base64 `MDQ6VXNlcjE=`), prefixed provider ids
 * (`evt_1Ab2...`, `cus_IaTagvBaGokTj`: a body with a digit or a capital letter, or 14 characters and more, with or
 * without digits), bare base62 ids (16 letters and digits and more, both present), hex strings of 12 and more with
 * a letter, numbers (a Shopify id of any length, the end of a `gid://shopify/Order/...`). A bare run of letters alone
 * is a word, never an id. An error code (`resource_missing`, `ERR_INVALID_URL`) stays:
 * it names the cause. `sql/failure-groups.ts` applies the same patterns in SQL (migration 0016).
 */
export const ERROR_PLACEHOLDERS: ReadonlyArray<readonly [RegExp, string]> = [
  [EMAIL, '<email>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b[A-Z]{1,3}_(?=[A-Za-z0-9_-]*[a-z])[A-Za-z0-9_-]{8,}/g, '<id>'],
  [/\bMD[A-Za-z0-9+/]{8,}={0,2}/g, '<id>'],
  [/\b[a-z]{2,12}(?:_(?:live|test))?_(?=[A-Za-z0-9]*[0-9A-Z]|[A-Za-z0-9]{14})[A-Za-z0-9]{6,}\b/g, '<id>'],
  [/\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{16,}\b/g, '<id>'],
  [/\b(?:0x)?(?=\d*[a-f])[0-9a-f]{12,}\b/gi, '<hex>'],
  [/\d+/g, '<n>'],
];

/** The error message with what varies between occurrences replaced by placeholders; its first 500 characters. */
export function normalizeErrorMessage(message: string): string {
  let text = message.slice(0, MAX_ERROR_LENGTH);
  for (const [pattern, placeholder] of ERROR_PLACEHOLDERS) text = text.replace(pattern, placeholder);
  return text.replace(/\s+/g, ' ').trim();
}

export function isDestinationAlert(alert: Alert): alert is DestinationAlert {
  return alert.kind.startsWith('destination_');
}

/** An event's alert: about one event, its effects, its payload. */
export function isEventAlert(alert: Alert): alert is EventDeadAlert | EffectFailedAlert {
  return alert.kind === 'event_dead' || alert.kind === 'effect_failed';
}

/** The source an alert is about (`alerts_sent.provider`); a destination's are about all it receives: `*`. */
export function alertProvider(alert: Alert): string {
  return isDestinationAlert(alert) ? '*' : alert.provider;
}

/**
 * What makes two alerts "the same problem": kind, provider, type, effect and the normalized error; a signature
 * alert's provider; a destination alert's destination.
 */
export function alertFingerprint(alert: Alert): string {
  if (alert.kind === 'signature_failures') return `${alert.kind}|${alert.provider}`;
  if (isDestinationAlert(alert)) return `${alert.kind}|${alert.destination}`;
  const effect = alert.effect ?? '';
  const kind = alert.group === undefined ? alert.kind : `${alert.kind}@${alert.group}`;
  return [kind, alert.provider, alert.type, effect, normalizeErrorMessage(errorLine(alert.error))].join('|');
}

/**
 * The alert without its payload: what a queue or a group keeps, so that no (possibly large) body outlives the
 * `notify()` call that brought it.
 */
export function withoutPayload(alert: Alert): Alert {
  return !isEventAlert(alert) || alert.payload === undefined ? alert : { ...alert, payload: undefined };
}
