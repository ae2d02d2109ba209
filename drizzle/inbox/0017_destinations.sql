-- Destinations (docs/destinations.md): each destination's state (active, paused by a 410 or an operator, or its
-- circuit open after failures in a row), shared by the workers that deliver to it; and, on each attempt of an
-- effect, the answer of a destination's delivery (its status and the first KiB of its body; null for other effects).
CREATE TABLE "destination_states" (
	"name" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"reason" text,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"probe_at" timestamp with time zone,
	"last_success_at" timestamp with time zone,
	"last_failure_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "destination_states_state_check" CHECK ("destination_states"."state" in ('active', 'paused', 'open'))
);
--> statement-breakpoint
ALTER TABLE "effect_attempts" ADD COLUMN "response_status" integer;--> statement-breakpoint
ALTER TABLE "effect_attempts" ADD COLUMN "response_excerpt" text;