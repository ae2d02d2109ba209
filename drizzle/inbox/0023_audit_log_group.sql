-- The consumer group of what an audit row acted on (a replay's, a bulk replay's, a failure group's), so that a
-- principal limited to groups reads only its groups' rows: written by insertAudit from here on, and filled in for
-- the rows before from what they recorded (their details' group, a bulk replay's filter or its operation's; a
-- replay without one was the default group's). Rows of no one group (sign-ins, purges, tokens) stay null.
ALTER TABLE "audit_log" ADD COLUMN "consumer_group" text;--> statement-breakpoint
CREATE INDEX "audit_log_group_idx" ON "audit_log" USING btree ("consumer_group","id");--> statement-breakpoint
-- The append-only trigger refuses every UPDATE: off for this one fill, in the migration's transaction.
ALTER TABLE "audit_log" DISABLE TRIGGER "audit_log_append_only";--> statement-breakpoint
UPDATE "audit_log" a SET "consumer_group" = coalesce(
    nullif(a.details->>'group', ''),
    nullif(a.details->'filter'->>'group', ''),
    (SELECT coalesce(nullif(o.filter->>'group', ''), 'default') FROM "replay_operations" o
      WHERE a.target = 'replay operation ' || o.id),
    'default')
  WHERE a.action IN ('replay', 'replay_forced', 'bulk_replay', 'bulk_replay_started', 'bulk_replay_cancelled',
                     'failure_group_acknowledged', 'failure_group_resolved');--> statement-breakpoint
ALTER TABLE "audit_log" ENABLE TRIGGER "audit_log_append_only";
