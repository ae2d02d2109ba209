CREATE TABLE "effect_routes" (
	"provider" text NOT NULL,
	"event_type" text NOT NULL,
	"effect" text NOT NULL,
	"kind" text NOT NULL,
	"position" integer NOT NULL,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "effect_routes_provider_event_type_effect_pk" PRIMARY KEY("provider","event_type","effect"),
	CONSTRAINT "effect_routes_kind_check" CHECK ("effect_routes"."kind" in ('database', 'external'))
);
