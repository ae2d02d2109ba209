DROP INDEX "effect_runs_failed_idx";--> statement-breakpoint
ALTER TABLE "effect_runs" ADD COLUMN "fingerprint" text;--> statement-breakpoint
ALTER TABLE "effect_runs" ADD COLUMN "event_type" text;--> statement-breakpoint
ALTER TABLE "effect_runs" ADD COLUMN "event_state" text;--> statement-breakpoint
CREATE INDEX "effect_runs_failing_idx" ON "effect_runs" USING btree ("effect","fingerprint","started_at","event_state","event_type","provider","event_id") WHERE "effect_runs"."status" = 'failed';--> statement-breakpoint
CREATE INDEX "effect_runs_failed_at_idx" ON "effect_runs" USING btree ("started_at") WHERE "effect_runs"."status" = 'failed';--> statement-breakpoint
-- The failure groups read the failing ledger rows alone (sql/failure-groups.ts): each failed row carries its error
-- normalized, its event's type and its event's state in the default group, kept by the triggers below, so no
-- read joins the events or runs the patterns per row. A failure write pays the patterns once; an event's status
-- change into or out of processed or dead updates its failed rows (none, for an event whose effects all completed).
--
-- normalizeErrorMessage (packages/inbox/src/ops/alerts/model.ts) in SQL: the same patterns in the same order,
-- PostgreSQL's \y for \b; failure-groups.test.ts holds the two to the same output.
CREATE FUNCTION "effect_error_fingerprint"(message text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT btrim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(left(coalesce(message, ''), 500), '(?<![^\s@"<>(),;:\\[\]])[^\s@"<>(),;:\\[\]]+@[^\s@"<>(),;:\\[\]]+', '<email>', 'g'), '\y[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\y', '<uuid>', 'gi'), '\y[a-z]{2,12}(?:_(?:live|test))?_(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{6,}\y', '<id>', 'g'), '\y(?:0x)?[0-9a-f]{12,}\y', '<hex>', 'gi'), '\d+', '<n>', 'g'), '\s+', ' ', 'g'))
$$;
--> statement-breakpoint
CREATE FUNCTION "effect_event_state"(status text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN status IN ('processed', 'dead') THEN status ELSE 'unfinished' END
$$;
--> statement-breakpoint
UPDATE "effect_runs" r
   SET "fingerprint" = effect_error_fingerprint(r.last_error), "event_type" = e.type,
       "event_state" = effect_event_state(e.status)
  FROM "webhook_events" e
 WHERE e.provider = r.provider AND e.event_id = r.event_id AND r.status = 'failed';
--> statement-breakpoint
-- A row that becomes (or stays) failed with an error: its fingerprint and its event's type and state, read now.
CREATE FUNCTION "effect_runs_failing_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.fingerprint := effect_error_fingerprint(NEW.last_error);
  SELECT e.type, effect_event_state(e.status) INTO NEW.event_type, NEW.event_state
    FROM webhook_events e WHERE e.provider = NEW.provider AND e.event_id = NEW.event_id;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "effect_runs_failing_facts" BEFORE INSERT OR UPDATE OF status, last_error ON "effect_runs"
  FOR EACH ROW WHEN (NEW.status = 'failed') EXECUTE FUNCTION "effect_runs_failing_facts"();
--> statement-breakpoint
-- A row inserted by the statement that inserts its event (a data-modifying WITH) found no event above: read it
-- once the statement is done.
CREATE FUNCTION "effect_runs_late_event_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE effect_runs r SET event_type = e.type, event_state = effect_event_state(e.status)
    FROM webhook_events e
   WHERE e.provider = NEW.provider AND e.event_id = NEW.event_id
     AND r.provider = NEW.provider AND r.event_id = NEW.event_id AND r.effect = NEW.effect;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "effect_runs_late_event_facts" AFTER INSERT ON "effect_runs"
  FOR EACH ROW WHEN (NEW.status = 'failed' AND NEW.event_state IS NULL)
  EXECUTE FUNCTION "effect_runs_late_event_facts"();
--> statement-breakpoint
-- An event settled, dead, or replayed from either: its failed rows follow.
CREATE FUNCTION "effect_runs_follow_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE effect_runs SET event_type = NEW.type, event_state = effect_event_state(NEW.status)
   WHERE provider = NEW.provider AND event_id = NEW.event_id AND status = 'failed';
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "effect_runs_follow_event" AFTER UPDATE OF status ON "webhook_events"
  FOR EACH ROW WHEN (effect_event_state(OLD.status) IS DISTINCT FROM effect_event_state(NEW.status))
  EXECUTE FUNCTION "effect_runs_follow_event"();
