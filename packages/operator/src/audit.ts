import type pg from 'pg';
import type { Principal } from './access/roles.ts';
import type { BulkReplayResult } from './bulk-replay.ts';
import { auditLog } from './sql/index.ts';
import type { ReconcileReport } from './reconcile-report.ts';
import type { PurgeResult } from './retention.ts';

/**
 * The audit rows of the operations that span many transactions (a purge in batches, a reconciliation one event at a
 * time): one row when the run ends, with its parameters and what it changed, whoever ran it (the CLI as its user, a
 * scheduled job as `system:<job>`). A dry run changes nothing and writes none.
 */

export async function auditPurge(
  pool: pg.Pool,
  by: Principal,
  parameters: Record<string, unknown>,
  result: PurgeResult,
): Promise<void> {
  if (result.dryRun) return;
  await pool.query(
    auditLog.insertAudit(by, {
      action: 'purge',
      target: 'retention',
      details: {
        parameters,
        payloadCutoff: result.payloadCutoff.toISOString(),
        keyCutoff: result.keyCutoff.toISOString(),
        payloadsPurged: result.payloadsPurged,
        keysDeleted: result.keysDeleted,
        effectRunsDeleted: result.effectRunsDeleted,
        complete: result.complete,
      },
    }),
  );
}

export async function auditReconcile(pool: pg.Pool, by: Principal, report: ReconcileReport): Promise<void> {
  if (report.dryRun) return;
  await pool.query(
    auditLog.insertAudit(by, {
      action: 'reconcile',
      target: 'stripe',
      details: {
        since: report.since.toISOString(),
        scanned: report.scanned,
        missing: report.missing,
        ingested: report.ingested,
      },
    }),
  );
}

/**
 * A bulk replay as a whole (the CLI's, the admin API's), beside each replayed event's own row: the filter it was
 * given (with its consumer group), its limit, and how far it went. A dry run writes none.
 */
export async function auditBulkReplay(
  pool: pg.Pool,
  by: Principal,
  parameters: { filter: Record<string, unknown> & { group: string }; limit?: number | undefined },
  { results, total, remaining }: BulkReplayResult,
): Promise<void> {
  await pool.query(
    auditLog.insertAudit(by, {
      action: 'bulk_replay',
      target: null,
      details: {
        ...parameters,
        total,
        replayed: results.length,
        queued: results.filter((r) => r.enqueued).length,
        remaining,
      },
      group: parameters.filter.group,
    }),
  );
}
