-- Refused authentication attempts per (scope, client) in a window: the admin API's bearer-token throttle counts
-- and refuses in one statement on this table (packages/inbox/src/sql/auth-failures.ts).
CREATE TABLE "auth_failures" (
	"scope" text NOT NULL,
	"client" text NOT NULL,
	"failures" integer NOT NULL,
	"resets_at" timestamp with time zone NOT NULL,
	CONSTRAINT "auth_failures_scope_client_pk" PRIMARY KEY("scope","client")
);
--> statement-breakpoint
CREATE INDEX "auth_failures_resets_at_idx" ON "auth_failures" USING btree ("resets_at");