CREATE TABLE "accounts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "accounts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"stripe_customer_id" text NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "accounts_stripe_customer_id_unique" UNIQUE("stripe_customer_id")
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
CREATE TABLE "shopify_orders" (
	"shop_domain" text NOT NULL,
	"order_id" bigint NOT NULL,
	"order_number" bigint,
	"name" text,
	"email" text,
	"customer_id" bigint,
	"total_price" text,
	"currency" text,
	"financial_status" text,
	"order_created_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "shopify_orders_shop_domain_order_id_pk" PRIMARY KEY("shop_domain","order_id")
);
--> statement-breakpoint
CREATE TABLE "shopify_shops" (
	"shop_domain" text PRIMARY KEY NOT NULL,
	"installed" boolean DEFAULT true NOT NULL,
	"uninstalled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "subscriptions" (
	"stripe_subscription_id" text PRIMARY KEY NOT NULL,
	"customer_id" text NOT NULL,
	"status" text NOT NULL,
	"price_id" text,
	"current_period_end" timestamp with time zone,
	"canceled_at" timestamp with time zone,
	"event_created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
CREATE INDEX "shopify_orders_customer_idx" ON "shopify_orders" USING btree ("shop_domain","customer_id");--> statement-breakpoint
CREATE INDEX "webhook_events_status_received_at_idx" ON "webhook_events" USING btree ("status","received_at");--> statement-breakpoint
CREATE INDEX "webhook_events_received_at_idx" ON "webhook_events" USING btree ("received_at");