-- A failing row's facts again without the failure_groups insert 0016 put here: two transactions failing the same
-- cause at once waited on each other's uncommitted insert of the same key. A group's first_seen is now written off
-- the worker's path, by the minute's fold and by operators' decisions (packages/operator/src/sql/failure-groups.ts).
CREATE OR REPLACE FUNCTION "effect_runs_failing_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.fingerprint := effect_error_fingerprint(NEW.last_error);
  SELECT e.type, effect_event_state(e.status) INTO NEW.event_type, NEW.event_state
    FROM webhook_events e WHERE e.provider = NEW.provider AND e.event_id = NEW.event_id;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "effect_runs_late_event_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE effect_runs r SET event_type = e.type, event_state = effect_event_state(e.status)
    FROM webhook_events e
   WHERE e.provider = NEW.provider AND e.event_id = NEW.event_id
     AND r.provider = NEW.provider AND r.event_id = NEW.event_id AND r.effect = NEW.effect;
  RETURN NULL;
END
$$;
