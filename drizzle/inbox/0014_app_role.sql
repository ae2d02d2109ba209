-- The application (receiver, worker, the CLI's operational commands) connects as a role that owns nothing: it reads
-- and writes the inbox's rows and only appends to audit_log, and cannot create, alter, drop or truncate a table, nor
-- disable a trigger (docs/deployment.md#database-roles). The migrate step grants it that much (packages/db/src/
-- app-role.ts). Four things the application does at run time need an owner's rights; each is a SECURITY DEFINER
-- function below, owned by the role that runs the migrations, doing that one thing on names it checks itself:
--   webhook_inbox_create_payload_partition(day)   a day's partition of webhook_event_payloads (workers, ahead);
--   webhook_inbox_detach_payload_partition(name)  an expired day's partition detached (retention);
--   webhook_inbox_drop_payload_partition(name)    a detached day's table dropped (retention);
--   audit_log_purge(older_than)                   audit rows older than 90 days at least (retention).
-- Each runs with a fixed search_path, pg_catalog first and pg_temp last, and names its tables with their schema, so
-- no object its caller can create (a temporary table or function) is resolved in place of the one meant. EXECUTE on
-- them is revoked from PUBLIC; the migrate step grants it to the application's role.
CREATE OR REPLACE FUNCTION "webhook_inbox_create_payload_partition"(day date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
  name text := 'webhook_event_payloads_p' || to_char(day, 'YYYYMMDD');
  grantee record;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('webhook_inbox_payload_partitions'));
  IF EXISTS (SELECT FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'public.webhook_event_payloads'::regclass AND c.relname = name) THEN
    RETURN false;
  END IF;
  -- A plain table then attached, as in 0006: ATTACH takes SHARE UPDATE EXCLUSIVE, which the receiver's inserts do
  -- not wait for.
  EXECUTE format('CREATE TABLE public.%I (LIKE public.webhook_event_payloads)', name);
  EXECUTE format('ALTER TABLE public.webhook_event_payloads ATTACH PARTITION public.%I FOR VALUES FROM (%L) TO (%L)',
    name, day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
  -- Retention and a payload's lookup read and write a partition by its own name: it carries its parent's grants.
  FOR grantee IN
    SELECT a.grantee AS role, string_agg(a.privilege_type, ', ') AS privileges
      FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.oid = 'public.webhook_event_payloads'::regclass AND a.grantee <> c.relowner
     GROUP BY a.grantee
  LOOP
    EXECUTE format('GRANT %s ON public.%I TO %s', grantee.privileges, name,
      CASE WHEN grantee.role = 0 THEN 'PUBLIC' ELSE grantee.role::regrole::text END);
  END LOOP;
  RETURN true;
END $$;
--> statement-breakpoint
-- Detaches an expired day's partition (a finished one left pending by an interrupted DETACH ... CONCURRENTLY is
-- finalized). CONCURRENTLY cannot run inside a function, so this takes ACCESS EXCLUSIVE on webhook_event_payloads for
-- the catalog change alone: the receiver's inserts wait for it. lock_timeout bounds that wait: the lock comes as soon
-- as the transactions writing payloads at that instant commit (a group commit's few milliseconds), or the call fails
-- with lock_not_available (55P03) after 50 ms and retention tries again (ops/retention.ts). The table is dropped by
-- the next function, in a transaction of its own: a drop's files are unlinked at commit, before locks are released,
-- and the parent's lock is not held through that.
CREATE FUNCTION "webhook_inbox_detach_payload_partition"(name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET lock_timeout = '50ms' AS $$
DECLARE
  pending boolean;
BEGIN
  SELECT i.inhdetachpending INTO pending
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = 'public.webhook_event_payloads'::regclass AND c.relname = name
     AND c.relnamespace = 'public'::regnamespace AND name ~ '^webhook_event_payloads_p[0-9]{8}$';
  IF NOT FOUND THEN
    RAISE EXCEPTION '% is not a day''s partition of webhook_event_payloads', name
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF pending THEN
    EXECUTE format('ALTER TABLE public.webhook_event_payloads DETACH PARTITION public.%I FINALIZE', name);
  ELSE
    EXECUTE format('ALTER TABLE public.webhook_event_payloads DETACH PARTITION public.%I', name);
  END IF;
END $$;
--> statement-breakpoint
-- Drops a day's table once detached: a table of its own then, so dropping it locks nothing the receiver uses. Only a
-- table named as a day's partition, and no longer a partition of anything.
CREATE FUNCTION "webhook_inbox_drop_payload_partition"(name text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  IF name !~ '^webhook_event_payloads_p[0-9]{8}$' THEN
    RAISE EXCEPTION '% is not a day''s partition of webhook_event_payloads', name
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF to_regclass(format('public.%I', name)) IS NULL THEN
    RETURN false;
  END IF;
  IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = to_regclass(format('public.%I', name))) THEN
    RAISE EXCEPTION '% is still attached: detach it first', name USING ERRCODE = 'object_in_use';
  END IF;
  EXECUTE format('DROP TABLE public.%I', name);
  RETURN true;
END $$;
--> statement-breakpoint
-- audit_log_purge (0009) deletes what the application's role may not: as the owner, still only rows older than the
-- 90 days it insists on.
ALTER FUNCTION "audit_log_purge"(interval) SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION "webhook_inbox_create_payload_partition"(date) FROM PUBLIC;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION "webhook_inbox_detach_payload_partition"(text) FROM PUBLIC;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION "webhook_inbox_drop_payload_partition"(text) FROM PUBLIC;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION "audit_log_purge"(interval) FROM PUBLIC;
