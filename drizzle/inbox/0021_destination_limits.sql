-- Destinations' limits across workers (docs/destinations.md#isolation-and-limits): a destination's concurrency as
-- leased slots, one row each, and its rate limit as the next start time on its state's row, so every worker of a
-- destination shares one concurrency and one rate.
CREATE TABLE "destination_slots" (
	"destination" text NOT NULL,
	"slot" integer NOT NULL,
	"held_until" timestamp with time zone DEFAULT '-infinity' NOT NULL,
	"token" uuid,
	CONSTRAINT "destination_slots_destination_slot_pk" PRIMARY KEY("destination","slot")
);
--> statement-breakpoint
ALTER TABLE "destination_states" ADD COLUMN "next_start_at" timestamp with time zone;