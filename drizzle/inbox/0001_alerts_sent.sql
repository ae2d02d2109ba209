CREATE TABLE "alerts_sent" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "alerts_sent_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"service" text NOT NULL,
	"kind" text NOT NULL,
	"fingerprint" text NOT NULL,
	"provider" text NOT NULL,
	"event_type" text,
	"effect" text,
	"event_id" text,
	"occurrences" integer NOT NULL,
	"outcome" text NOT NULL,
	"headline" text NOT NULL,
	CONSTRAINT "alerts_sent_outcome_check" CHECK ("alerts_sent"."outcome" in ('sent', 'logged', 'failed'))
);
--> statement-breakpoint
CREATE INDEX "alerts_sent_at_idx" ON "alerts_sent" USING btree ("at");