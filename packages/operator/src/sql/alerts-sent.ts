import type { Statement } from '@webhook-inbox/inbox/sql';

/** Statements on `alerts_sent`: the record of alert messages, written by the alert journal, read by the console. */

/** One alert message's row: the alerter's `AlertOutcome` (`alerts/alerter.ts`) is one. */
export interface AlertSent {
  service: string;
  kind: string;
  fingerprint: string;
  provider: string;
  eventType: string | null;
  effect: string | null;
  eventId: string | null;
  /** Alerts the message stands for: 1, or a summary's repeats. */
  occurrences: number;
  /** What became of the message: `sent`, `logged` or `failed`. */
  outcome: string;
  /** The message's first line. */
  headline: string;
}

export function insertAlertSent(outcome: AlertSent): Statement {
  return {
    name: 'insert_alert_sent',
    text: `
      insert into alerts_sent
        (service, kind, fingerprint, provider, event_type, effect, event_id, occurrences, outcome, headline)
      values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    values: [
      outcome.service,
      outcome.kind,
      outcome.fingerprint,
      outcome.provider,
      outcome.eventType,
      outcome.effect,
      outcome.eventId,
      outcome.occurrences,
      outcome.outcome,
      outcome.headline,
    ],
  };
}

export interface AlertGroupRow {
  fingerprint: string;
  kind: string;
  provider: string;
  eventType: string | null;
  effect: string | null;
  /** The newest message's first line. */
  headline: string;
  /** The newest message's event, when it is about one. */
  eventId: string | null;
  /** Alerts counted (a summary message stands for many). */
  occurrences: number;
  messages: number;
  failed: number;
  firstAt: Date;
  lastAt: Date;
}

/** Messages since `since`, grouped by problem (fingerprint), the most recent problem first. */
export function alertGroups(since: Date, limit: number): Statement {
  return {
    text: `
      select fingerprint, kind, provider, event_type as "eventType", effect,
             (array_agg(headline order by at desc))[1] as headline,
             (array_agg(event_id order by at desc))[1] as "eventId",
             sum(occurrences)::int as occurrences, count(*)::int as messages,
             count(*) filter (where outcome = 'failed')::int as failed,
             min(at) as "firstAt", max(at) as "lastAt"
        from alerts_sent
       where at >= $1
       group by fingerprint, kind, provider, event_type, effect
       order by max(at) desc
       limit $2`,
    values: [since, limit],
  };
}

export interface AlertMessageRow {
  id: number;
  at: Date;
  service: string;
  kind: string;
  provider: string;
  eventId: string | null;
  occurrences: number;
  outcome: string;
  headline: string;
}

/** The newest messages, one per row (`alerts_sent_at_idx`). */
export function recentAlerts(limit: number): Statement {
  return {
    text: `
      select id, at, service, kind, provider, event_id as "eventId", occurrences, outcome, headline
        from alerts_sent order by at desc limit $1`,
    values: [limit],
  };
}
