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
-- One partition per day that holds a payload, and for today and the next 14 days (the worker's maintenance
-- keeps creating them ahead from then on). Named webhook_event_payloads_pYYYYMMDD, bounds at UTC midnight.
DO $$
DECLARE
  day date;
BEGIN
  FOR day IN
    SELECT DISTINCT (received_at AT TIME ZONE 'UTC')::date FROM "webhook_events" WHERE "payload" IS NOT NULL
    UNION
    SELECT (now() AT TIME ZONE 'UTC')::date + i FROM generate_series(0, 14) AS i
  LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF "webhook_event_payloads" FOR VALUES FROM (%L) TO (%L)',
      'webhook_event_payloads_p' || to_char(day, 'YYYYMMDD'),
      (day::timestamp AT TIME ZONE 'UTC'),
      ((day + 1)::timestamp AT TIME ZONE 'UTC'));
  END LOOP;
END $$;
--> statement-breakpoint
INSERT INTO "webhook_event_payloads" ("provider", "event_id", "received_at", "payload")
SELECT "provider", "event_id", "received_at", "payload" FROM "webhook_events" WHERE "payload" IS NOT NULL;
--> statement-breakpoint
ALTER TABLE "webhook_events" DROP COLUMN "payload";
--> statement-breakpoint
-- 0005's out-of-line storage was for the payload; the narrow rows left fit inline.
ALTER TABLE "webhook_events" RESET (toast_tuple_target);
