CREATE TABLE "idempotency_keys" (
	"key" text PRIMARY KEY NOT NULL,
	"effect" text NOT NULL,
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"claimed_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_status_check" CHECK ("idempotency_keys"."status" in ('claimed', 'completed', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "shopify_compliance_requests" (
	"event_id" text PRIMARY KEY NOT NULL,
	"shop_domain" text NOT NULL,
	"topic" text NOT NULL,
	"customer_id" bigint,
	"order_ids" bigint[] DEFAULT '{}'::bigint[] NOT NULL,
	"data_request_id" bigint,
	"redacted_orders" integer,
	"redacted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "subscriptions" ADD COLUMN "provisional" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "shopify_compliance_requests_shop_idx" ON "shopify_compliance_requests" USING btree ("shop_domain","created_at");