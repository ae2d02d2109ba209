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
	"provisional" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "shopify_compliance_requests_shop_idx" ON "shopify_compliance_requests" USING btree ("shop_domain","created_at");--> statement-breakpoint
CREATE INDEX "shopify_orders_customer_idx" ON "shopify_orders" USING btree ("shop_domain","customer_id");