-- What an event is about (a customer, a shop, a repository), read from its body at ingest
-- (packages/inbox/src/providers/subject.ts), for the console's and the event log's search. Adding a nullable
-- column without a default rewrites nothing; events recorded before have none. The GIN index answers
-- `subject @> array['cus_123']`.
ALTER TABLE "webhook_events" ADD COLUMN "subject" text[];--> statement-breakpoint
CREATE INDEX "webhook_events_subject_idx" ON "webhook_events" USING gin ("subject");
