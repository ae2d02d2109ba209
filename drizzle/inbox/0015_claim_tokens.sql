ALTER TABLE "idempotency_keys" ADD COLUMN "claim_token" uuid;
-- The fencing token of an external effect's claim (effects/claims.ts): every claim writes a fresh one, so an attempt
-- that lost its lease to another (its worker froze past the lease) matches no row, and its check before the call,
-- its renewals and its marks change nothing. The fence also compares the claim's number (attempts), which workers
-- older than this column still increment when they claim.
