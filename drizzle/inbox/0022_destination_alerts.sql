-- Destination alerts (docs/destinations.md#alerts): the causes of a destination's current alert episodes already
-- alerted on (open, paused, failure_rate), so the workers watching it send one alert per episode between them.
ALTER TABLE "destination_states" ADD COLUMN "alerted" text[] DEFAULT '{}'::text[] NOT NULL;
