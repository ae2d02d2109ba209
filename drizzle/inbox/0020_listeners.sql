-- `webhook-inbox listen` (docs/destinations.md#local-development): each listener the admin API created, and the
-- events its client acknowledged, so a client that reconnects is sent every event since the listener started that it
-- has not acknowledged, and none that it has, whatever order their transactions committed in.
CREATE TABLE "listener_acks" (
	"listener_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"acked_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "listener_acks_listener_id_provider_event_id_pk" PRIMARY KEY("listener_id","provider","event_id")
);
--> statement-breakpoint
CREATE TABLE "listeners" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"actor" text NOT NULL,
	"groups" text[],
	"types" text[] DEFAULT '{}'::text[] NOT NULL,
	"body" text DEFAULT 'envelope' NOT NULL,
	"since" timestamp with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"remote_address" text,
	CONSTRAINT "listeners_body_check" CHECK ("listeners"."body" in ('envelope', 'raw'))
);
--> statement-breakpoint
ALTER TABLE "listener_acks" ADD CONSTRAINT "listener_acks_listener_id_listeners_id_fk" FOREIGN KEY ("listener_id") REFERENCES "public"."listeners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "listeners_seen_at_idx" ON "listeners" USING btree ("seen_at");