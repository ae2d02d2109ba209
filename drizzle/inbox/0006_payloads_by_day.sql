-- Payloads move out of webhook_events into webhook_event_payloads, partitioned by UTC day of received_at:
-- retention then drops a day of payloads as one partition instead of rewriting rows, and webhook_events keeps
-- only the narrow key and status columns. Every payload is copied (an event whose payload retention had already
-- nulled gets no row, and reads as purged, as before). The copy runs in this migration's transaction: on a large
-- table it takes as long as reading every payload once, and the receiver's inserts wait for it.
CREATE TABLE "webhook_event_payloads" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"payload" jsonb NOT NULL,
	CONSTRAINT "webhook_event_payloads_provider_event_id_received_at_pk" PRIMARY KEY("provider","event_id","received_at")
) PARTITION BY RANGE ("received_at");
--> statement-breakpoint
-- Creates the partition of one UTC day (webhook_event_payloads_pYYYYMMDD, bounds at UTC midnight) unless it exists;
-- true when it created it. As a plain table then attached, not CREATE TABLE ... PARTITION OF, which would lock the
-- parent exclusively and stop the receiver's inserts while it waits for every transaction reading it: ATTACH takes
-- SHARE UPDATE EXCLUSIVE, which inserts and reads do not wait for. Callers take turns on a transaction-scoped lock.
CREATE FUNCTION "webhook_inbox_create_payload_partition"(day date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  name text := 'webhook_event_payloads_p' || to_char(day, 'YYYYMMDD');
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('webhook_inbox_payload_partitions'));
  IF EXISTS (SELECT FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'webhook_event_payloads'::regclass AND c.relname = name) THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE "webhook_event_payloads")', name);
  EXECUTE format('ALTER TABLE "webhook_event_payloads" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
    name, day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
  RETURN true;
END $$;
--> statement-breakpoint
-- A partition for each day that holds a payload, and for today and the next 14 days (the workers keep creating
-- them ahead from then on).
SELECT "webhook_inbox_create_payload_partition"(day)
  FROM (SELECT DISTINCT ("received_at" AT TIME ZONE 'UTC')::date AS day FROM "webhook_events" WHERE "payload" IS NOT NULL
        UNION
        SELECT (now() AT TIME ZONE 'UTC')::date + i FROM generate_series(0, 14) AS i) AS days
 ORDER BY day;
--> statement-breakpoint
INSERT INTO "webhook_event_payloads" ("provider", "event_id", "received_at", "payload")
SELECT "provider", "event_id", "received_at", "payload" FROM "webhook_events" WHERE "payload" IS NOT NULL;
--> statement-breakpoint
ALTER TABLE "webhook_events" DROP COLUMN "payload";
--> statement-breakpoint
-- 0005's out-of-line storage was for the payload; the narrow rows left fit inline.
ALTER TABLE "webhook_events" RESET (toast_tuple_target);
