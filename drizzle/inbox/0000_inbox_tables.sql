CREATE TABLE "audit_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"remote_address" text
);
--> statement-breakpoint
CREATE TABLE "effect_runs" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"effect" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"idempotency_key" text NOT NULL,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"forced_at" timestamp with time zone,
	CONSTRAINT "effect_runs_provider_event_id_effect_pk" PRIMARY KEY("provider","event_id","effect"),
	CONSTRAINT "effect_runs_status_check" CHECK ("effect_runs"."status" in ('running', 'completed', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"key" text PRIMARY KEY NOT NULL,
	"effect" text NOT NULL,
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"claimed_at" timestamp with time zone,
	"claim_expires_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_status_check" CHECK ("idempotency_keys"."status" in ('claimed', 'completed', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "replay_operations" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "replay_operations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"filter" jsonb NOT NULL,
	"received_up_to" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"total" integer NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"enqueued" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"cursor" jsonb,
	"last_error" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"cancelled_by" text,
	"locked_by" text,
	"locked_until" timestamp with time zone,
	CONSTRAINT "replay_operations_status_check" CHECK ("replay_operations"."status" in ('pending', 'running', 'completed', 'cancelled', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"source" text DEFAULT 'webhook' NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text DEFAULT 'received' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"processed_at" timestamp with time zone,
	CONSTRAINT "webhook_events_provider_event_id_pk" PRIMARY KEY("provider","event_id"),
	CONSTRAINT "webhook_events_status_check" CHECK ("webhook_events"."status" in ('received', 'processing', 'processed', 'failed', 'dead')),
	CONSTRAINT "webhook_events_source_check" CHECK ("webhook_events"."source" in ('webhook', 'reconciled'))
);
--> statement-breakpoint
ALTER TABLE "effect_runs" ADD CONSTRAINT "effect_runs_provider_event_id_webhook_events_provider_event_id_fk" FOREIGN KEY ("provider","event_id") REFERENCES "public"."webhook_events"("provider","event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "replay_operations_unfinished_idx" ON "replay_operations" USING btree ("created_at") WHERE "replay_operations"."status" in ('pending', 'running');--> statement-breakpoint
CREATE INDEX "webhook_events_status_received_at_idx" ON "webhook_events" USING btree ("status","received_at");--> statement-breakpoint
CREATE INDEX "webhook_events_received_at_idx" ON "webhook_events" USING btree ("received_at");