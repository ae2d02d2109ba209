-- Scoped API tokens (hashed), the audit log's role and auth method, its filter indexes, and the audit log made
-- append-only: a trigger refuses UPDATE and TRUNCATE, and refuses DELETE except from audit_log_purge(), the one
-- documented way to remove old audit rows (SECURITY.md), which deletes only rows older than 90 days. The trigger
-- guards against the application's own mistakes and a stolen application credential used through the inbox's
-- code paths; a database owner can still drop it, which is itself a DDL event the database's logs record.
CREATE TABLE "api_tokens" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "api_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"hash" text NOT NULL,
	"role" text NOT NULL,
	"groups" text[],
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"revoked_by" text,
	CONSTRAINT "api_tokens_name_key" UNIQUE("name"),
	CONSTRAINT "api_tokens_hash_key" UNIQUE("hash"),
	CONSTRAINT "api_tokens_role_check" CHECK ("api_tokens"."role" in ('viewer', 'operator', 'admin')),
	CONSTRAINT "api_tokens_groups_check" CHECK ("api_tokens"."groups" is null or cardinality("api_tokens"."groups") > 0)
);
--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "role" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "auth_method" text;--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor","id");--> statement-breakpoint
CREATE INDEX "audit_log_action_idx" ON "audit_log" USING btree ("action","id");--> statement-breakpoint
CREATE INDEX "audit_log_target_idx" ON "audit_log" USING btree ("target","id");
--> statement-breakpoint
CREATE FUNCTION "audit_log_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE'
     AND current_setting('webhook_inbox.audit_purge', true) = 'on'
     AND OLD.at < now() - interval '90 days' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only: % refused (old rows go through audit_log_purge)', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
CREATE TRIGGER "audit_log_append_only" BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION "audit_log_refuse_change"();
--> statement-breakpoint
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_refuse_change"();
--> statement-breakpoint
-- Deletes the audit rows older than `older_than` (at least 90 days) and says how many. The setting it raises is
-- local to its transaction.
CREATE FUNCTION "audit_log_purge"(older_than interval) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
BEGIN
  IF older_than < interval '90 days' THEN
    RAISE EXCEPTION 'audit_log_purge keeps at least 90 days of audit rows (asked: %)', older_than
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  PERFORM set_config('webhook_inbox.audit_purge', 'on', true);
  DELETE FROM "audit_log" WHERE at < now() - older_than;
  GET DIAGNOSTICS removed = ROW_COUNT;
  PERFORM set_config('webhook_inbox.audit_purge', 'off', true);
  RETURN removed;
END
$$;
