-- A destination's deliveries read over a time window (the console's success rate, latency percentiles and failures
-- by cause, the worker's metrics): one index range per destination effect instead of every attempt row.
CREATE INDEX "effect_attempts_effect_started_idx" ON "effect_attempts" USING btree ("effect","started_at");
