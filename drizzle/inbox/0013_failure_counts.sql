CREATE TABLE "failure_count_deltas" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "failure_count_deltas_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"provider" text NOT NULL,
	"event_type" text,
	"effect" text NOT NULL,
	"fingerprint" text,
	"event_state" text,
	"n" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "failure_counts" (
	"provider" text NOT NULL,
	"event_type" text,
	"effect" text NOT NULL,
	"fingerprint" text,
	"event_state" text,
	"n" integer NOT NULL,
	CONSTRAINT "failure_counts_key" UNIQUE NULLS NOT DISTINCT("provider","event_type","effect","fingerprint","event_state")
);
--> statement-breakpoint
ALTER TABLE "replay_operation_events" ADD COLUMN "outcome" text DEFAULT 'unfinished' NOT NULL;--> statement-breakpoint
CREATE INDEX "replay_operation_events_outcome_idx" ON "replay_operation_events" USING btree ("operation_id","outcome","provider","event_id");--> statement-breakpoint
CREATE INDEX "replay_operation_events_event_idx" ON "replay_operation_events" USING btree ("provider","event_id");--> statement-breakpoint
-- The failure groups' counts (sql/failure-groups.ts), kept in the transaction that changes a failing ledger row: a
-- failure, a completion, a retry's claim, the event's state followed (0012), a purge. Each change appends -1 for what
-- the row was and +1 for what it is to failure_count_deltas, never updating a shared row: thousands of workers
-- failing effects of one group at once insert, none waits for another's counter (a counter row updated in place
-- would serialize them until each commits, and lock two groups' rows in whatever order a statement meets them).
-- Reads sum the deltas with failure_counts; foldFailureCounts (ops/failure-counts.ts) moves deltas there in
-- bounded batches, so a read sums the keys plus what changed since the last fold.
INSERT INTO "failure_counts" ("provider", "event_type", "effect", "fingerprint", "event_state", "n")
SELECT "provider", "event_type", "effect", "fingerprint", "event_state", count(*)::int
  FROM "effect_runs" WHERE "status" = 'failed'
 GROUP BY 1, 2, 3, 4, 5;
--> statement-breakpoint
CREATE FUNCTION "failure_count_delta"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.status = 'failed' THEN
    INSERT INTO failure_count_deltas (provider, event_type, effect, fingerprint, event_state, n)
    VALUES (OLD.provider, OLD.event_type, OLD.effect, OLD.fingerprint, OLD.event_state, -1);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.status = 'failed' THEN
    INSERT INTO failure_count_deltas (provider, event_type, effect, fingerprint, event_state, n)
    VALUES (NEW.provider, NEW.event_type, NEW.effect, NEW.fingerprint, NEW.event_state, 1);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Only rows failing before or after: an effect that runs and completes never calls the function.
CREATE TRIGGER "failure_count_insert" AFTER INSERT ON "effect_runs"
  FOR EACH ROW WHEN (NEW.status = 'failed') EXECUTE FUNCTION "failure_count_delta"();
--> statement-breakpoint
CREATE TRIGGER "failure_count_update" AFTER UPDATE ON "effect_runs"
  FOR EACH ROW WHEN ((OLD.status = 'failed' OR NEW.status = 'failed')
    AND (OLD.status, OLD.event_type, OLD.fingerprint, OLD.event_state)
        IS DISTINCT FROM (NEW.status, NEW.event_type, NEW.fingerprint, NEW.event_state))
  EXECUTE FUNCTION "failure_count_delta"();
--> statement-breakpoint
CREATE TRIGGER "failure_count_delete" AFTER DELETE ON "effect_runs"
  FOR EACH ROW WHEN (OLD.status = 'failed') EXECUTE FUNCTION "failure_count_delta"();
--> statement-breakpoint
-- An emptied ledger has no failures (TRUNCATE fires no row triggers).
CREATE FUNCTION "failure_counts_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM failure_count_deltas;
  DELETE FROM failure_counts;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "failure_counts_truncated" AFTER TRUNCATE ON "effect_runs"
  FOR EACH STATEMENT EXECUTE FUNCTION "failure_counts_truncated"();
--> statement-breakpoint
-- A bulk replay's outcomes (sql/replay-operations.ts): each replayed event's state in the operation's consumer
-- group, as effect_event_state names it, or gone, kept on its replay_operation_events row, so the operations list
-- counts index entries instead of joining every replayed event to its event. The row is written with the state read
-- under a share lock on the event (recordReplayed), so a status change either comes first and is read, or waits
-- for the row's commit and then updates it below.
UPDATE "replay_operation_events" x
   SET "outcome" = CASE WHEN s.status IS NULL THEN 'gone' ELSE effect_event_state(s.status) END
  FROM (SELECT r.operation_id, r.provider, r.event_id,
               CASE WHEN coalesce(o.filter->>'group', '') IN ('', 'default') THEN e.status ELSE g.status END AS status
          FROM replay_operation_events r
          JOIN replay_operations o ON o.id = r.operation_id
          LEFT JOIN webhook_events e ON e.provider = r.provider AND e.event_id = r.event_id
          LEFT JOIN webhook_event_groups g
            ON g.provider = r.provider AND g.event_id = r.event_id AND g.consumer_group = o.filter->>'group') s
 WHERE x.operation_id = s.operation_id AND x.provider = s.provider AND x.event_id = s.event_id;
--> statement-breakpoint
-- An event's status (the default group's) or its row in another group changed class, or went: the rows of the
-- operations of that group that replayed it follow. An event deleted is gone from every operation.
CREATE FUNCTION "replay_outcomes_follow"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  consumer_group text; -- null: the default group's status, on the event's own row
BEGIN
  IF TG_TABLE_NAME = 'webhook_event_groups' THEN
    consumer_group := OLD.consumer_group;
  END IF;
  UPDATE replay_operation_events x
     SET outcome = CASE WHEN TG_OP = 'DELETE' THEN 'gone' ELSE effect_event_state(NEW.status) END
    FROM replay_operations o
   WHERE x.provider = OLD.provider AND x.event_id = OLD.event_id AND o.id = x.operation_id
     AND CASE WHEN consumer_group IS NOT NULL THEN o.filter->>'group' = consumer_group
              ELSE TG_OP = 'DELETE' OR coalesce(o.filter->>'group', '') IN ('', 'default') END;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "replay_outcomes_follow_event" AFTER UPDATE OF status ON "webhook_events"
  FOR EACH ROW WHEN (effect_event_state(OLD.status) IS DISTINCT FROM effect_event_state(NEW.status))
  EXECUTE FUNCTION "replay_outcomes_follow"();
--> statement-breakpoint
CREATE TRIGGER "replay_outcomes_event_gone" AFTER DELETE ON "webhook_events"
  FOR EACH ROW EXECUTE FUNCTION "replay_outcomes_follow"();
--> statement-breakpoint
CREATE TRIGGER "replay_outcomes_follow_group" AFTER UPDATE OF status ON "webhook_event_groups"
  FOR EACH ROW WHEN (effect_event_state(OLD.status) IS DISTINCT FROM effect_event_state(NEW.status))
  EXECUTE FUNCTION "replay_outcomes_follow"();
--> statement-breakpoint
CREATE TRIGGER "replay_outcomes_group_gone" AFTER DELETE ON "webhook_event_groups"
  FOR EACH ROW EXECUTE FUNCTION "replay_outcomes_follow"();
--> statement-breakpoint
CREATE FUNCTION "replay_outcomes_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE replay_operation_events SET outcome = 'gone' WHERE outcome <> 'gone';
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "replay_outcomes_truncated" AFTER TRUNCATE ON "webhook_events"
  FOR EACH STATEMENT EXECUTE FUNCTION "replay_outcomes_truncated"();
