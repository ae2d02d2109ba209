CREATE TABLE "inbox_samples" (
	"minute" timestamp with time zone PRIMARY KEY NOT NULL,
	"events_received" integer NOT NULL,
	"events_processing" integer NOT NULL,
	"events_failed" integer NOT NULL,
	"events_dead" integer NOT NULL,
	"oldest_unprocessed_seconds" integer NOT NULL,
	"jobs_created" integer NOT NULL,
	"jobs_retry" integer NOT NULL,
	"jobs_active" integer NOT NULL,
	"failing_effects" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_delivery_counts" (
	"minute" timestamp with time zone NOT NULL,
	"provider" text NOT NULL,
	"outcome" text NOT NULL,
	"http_status" integer NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "webhook_delivery_counts_minute_provider_outcome_pk" PRIMARY KEY("minute","provider","outcome")
);
