import type { AlertOutcome } from '../ops/alerts/delivery.ts';
import type { Statement } from './statement.ts';

/** Statements on `alerts_sent`: the record of alert messages, written by the alert journal. */

export function insertAlertSent(outcome: AlertOutcome): Statement {
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
