-- Consumer groups. Existing routes become the default group's (the column's default), whose status stays in
-- webhook_events.status; webhook_event_groups holds the other groups' and starts empty. The foreign key is added to
-- an empty table: its validation is instant, and the SHARE ROW EXCLUSIVE lock it takes on webhook_events (receivers
-- wait) lasts as long as this transaction.
CREATE TABLE "webhook_event_groups" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"consumer_group" text NOT NULL,
	"status" text DEFAULT 'received' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"processed_at" timestamp with time zone,
	CONSTRAINT "webhook_event_groups_provider_event_id_consumer_group_pk" PRIMARY KEY("provider","event_id","consumer_group"),
	CONSTRAINT "webhook_event_groups_status_check" CHECK ("webhook_event_groups"."status" in ('received', 'processing', 'processed', 'failed', 'dead'))
);
--> statement-breakpoint
ALTER TABLE "effect_routes" ADD COLUMN "consumer_group" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_event_groups" ADD CONSTRAINT "webhook_event_groups_provider_event_id_webhook_events_provider_event_id_fk" FOREIGN KEY ("provider","event_id") REFERENCES "public"."webhook_events"("provider","event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_event_groups_unfinished_idx" ON "webhook_event_groups" USING btree ("consumer_group","status") WHERE "webhook_event_groups"."status" <> 'processed';