CREATE TABLE "refunds" (
	"charge_id" text PRIMARY KEY NOT NULL,
	"amount_refunded" integer NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL
);
