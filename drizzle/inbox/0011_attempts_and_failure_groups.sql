CREATE TABLE "effect_attempts" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"effect" text NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"outcome" text NOT NULL,
	"error" text,
	"worker" text NOT NULL,
	"job_id" text,
	CONSTRAINT "effect_attempts_provider_event_id_effect_attempt_pk" PRIMARY KEY("provider","event_id","effect","attempt"),
	CONSTRAINT "effect_attempts_outcome_check" CHECK ("effect_attempts"."outcome" in ('completed', 'failed', 'dead'))
);
--> statement-breakpoint
CREATE TABLE "failure_groups" (
	"consumer_group" text NOT NULL,
	"effect" text NOT NULL,
	"fingerprint" text NOT NULL,
	"acknowledged_at" timestamp with time zone,
	"acknowledged_by" text,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	CONSTRAINT "failure_groups_consumer_group_effect_fingerprint_pk" PRIMARY KEY("consumer_group","effect","fingerprint")
);
--> statement-breakpoint
CREATE TABLE "replay_operation_events" (
	"operation_id" bigint NOT NULL,
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	CONSTRAINT "replay_operation_events_operation_id_provider_event_id_pk" PRIMARY KEY("operation_id","provider","event_id")
);
--> statement-breakpoint
ALTER TABLE "effect_attempts" ADD CONSTRAINT "effect_attempts_provider_event_id_webhook_events_provider_event_id_fk" FOREIGN KEY ("provider","event_id") REFERENCES "public"."webhook_events"("provider","event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "replay_operation_events" ADD CONSTRAINT "replay_operation_events_operation_id_replay_operations_id_fk" FOREIGN KEY ("operation_id") REFERENCES "public"."replay_operations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "effect_runs_failed_idx" ON "effect_runs" USING btree ("effect","provider","event_id") WHERE "effect_runs"."status" = 'failed';