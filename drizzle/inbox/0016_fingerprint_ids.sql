ALTER TABLE "failure_groups" ADD COLUMN "first_seen" timestamp with time zone;--> statement-breakpoint
-- normalizeErrorMessage (packages/operator/src/alerts/model.ts) in SQL, with the id shapes that carry no digit:
-- GitHub node ids (current and legacy base64), prefixed provider ids whose body has a digit or a capital letter or
-- is 14 characters and more, bare base62 ids of 16 characters and more, hex only with a letter (a long number is a
-- number, `<n>`, whatever its length); the same patterns in the same order,
-- PostgreSQL's \y for \b. failure-groups.test.ts holds the two to the same output, over generated ids too.
CREATE OR REPLACE FUNCTION "effect_error_fingerprint"(message text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT btrim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    left(coalesce(message, ''), 500),
    '(?<![^\s@"<>(),;:\\[\]])[^\s@"<>(),;:\\[\]]+@[^\s@"<>(),;:\\[\]]+', '<email>', 'g'),
    '\y[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\y', '<uuid>', 'gi'),
    '\y[A-Z]{1,3}_(?=[A-Za-z0-9_-]*[a-z])[A-Za-z0-9_-]{8,}', '<id>', 'g'),
    '\yMD[A-Za-z0-9+/]{8,}={0,2}', '<id>', 'g'),
    '\y[a-z]{2,12}(?:_(?:live|test))?_(?=[A-Za-z0-9]*[0-9A-Z]|[A-Za-z0-9]{14})[A-Za-z0-9]{6,}\y', '<id>', 'g'),
    '\y(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{16,}\y', '<id>', 'g'),
    '\y(?:0x)?(?=\d*[a-f])[0-9a-f]{12,}\y', '<hex>', 'gi'),
    '\d+', '<n>', 'g'),
    '\s+', ' ', 'g'))
$$;
--> statement-breakpoint
-- A failing row's consumer group: its effect's route's, the default group's for an effect no worker registers.
CREATE FUNCTION "effect_consumer_group"(provider text, event_type text, effect text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT rt.consumer_group FROM effect_routes rt
                    WHERE rt.provider = $1 AND rt.event_type = $2 AND rt.effect = $3), 'default')
$$;
--> statement-breakpoint
-- A failure group's identity outlives its failures: the first failing row of a (group, effect, fingerprint)
-- creates its failure_groups row with first_seen; later ones find it and do nothing (no row lock, no wait between
-- workers failing the same way). A cause that clears (its events processed) and returns keeps its row, its
-- first_seen and its operators' decisions.
CREATE OR REPLACE FUNCTION "effect_runs_failing_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.fingerprint := effect_error_fingerprint(NEW.last_error);
  SELECT e.type, effect_event_state(e.status) INTO NEW.event_type, NEW.event_state
    FROM webhook_events e WHERE e.provider = NEW.provider AND e.event_id = NEW.event_id;
  IF NEW.event_type IS NOT NULL THEN
    INSERT INTO failure_groups (consumer_group, effect, fingerprint, first_seen)
    VALUES (effect_consumer_group(NEW.provider, NEW.event_type, NEW.effect), NEW.effect, NEW.fingerprint,
            coalesce(NEW.started_at, now()))
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "effect_runs_late_event_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  found_type text;
BEGIN
  UPDATE effect_runs r SET event_type = e.type, event_state = effect_event_state(e.status)
    FROM webhook_events e
   WHERE e.provider = NEW.provider AND e.event_id = NEW.event_id
     AND r.provider = NEW.provider AND r.event_id = NEW.event_id AND r.effect = NEW.effect
  RETURNING e.type INTO found_type;
  IF found_type IS NOT NULL THEN
    INSERT INTO failure_groups (consumer_group, effect, fingerprint, first_seen)
    VALUES (effect_consumer_group(NEW.provider, found_type, NEW.effect), NEW.effect, NEW.fingerprint,
            coalesce(NEW.started_at, now()))
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- The failing rows under the new patterns (failure_count_update appends their counts' deltas).
UPDATE "effect_runs" SET "fingerprint" = effect_error_fingerprint("last_error")
 WHERE "status" = 'failed' AND "fingerprint" IS DISTINCT FROM effect_error_fingerprint("last_error");
--> statement-breakpoint
-- Operators' decisions follow their groups to the new fingerprints (an old fingerprint re-normalized is the new one
-- for ids without digits, the ones the old patterns left); two groups that become one keep the latest decision.
INSERT INTO "failure_groups" ("consumer_group", "effect", "fingerprint", "acknowledged_at", "acknowledged_by",
                              "resolved_at", "resolved_by")
SELECT DISTINCT ON (1, 2, 3) "consumer_group", "effect", effect_error_fingerprint("fingerprint"), "acknowledged_at",
       "acknowledged_by", "resolved_at", "resolved_by"
  FROM "failure_groups" WHERE effect_error_fingerprint("fingerprint") <> "fingerprint"
 ORDER BY 1, 2, 3, greatest("acknowledged_at", "resolved_at") DESC NULLS LAST
ON CONFLICT DO NOTHING;
--> statement-breakpoint
DELETE FROM "failure_groups" WHERE effect_error_fingerprint("fingerprint") <> "fingerprint";
--> statement-breakpoint
-- Every group failing now gets its row, first seen at its earliest failing row; a decided group with none failing,
-- at its first decision.
INSERT INTO "failure_groups" ("consumer_group", "effect", "fingerprint", "first_seen")
SELECT effect_consumer_group(r.provider, r.event_type, r.effect), r.effect, r.fingerprint,
       min(coalesce(r.started_at, now()))
  FROM "effect_runs" r WHERE r.status = 'failed' AND r.event_type IS NOT NULL
 GROUP BY 1, 2, 3
ON CONFLICT ("consumer_group", "effect", "fingerprint") DO UPDATE SET "first_seen" = excluded."first_seen";
--> statement-breakpoint
UPDATE "failure_groups" SET "first_seen" = least("acknowledged_at", "resolved_at") WHERE "first_seen" IS NULL;
