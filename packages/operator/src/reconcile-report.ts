/**
 * What a reconciliation found and did, apart from `reconcile.ts`, which names the `stripe` package: the audit log
 * and a team's code read a report without Stripe's types installed.
 */

export interface ReconcileCounts {
  /** Distinct events Stripe listed. */
  scanned: number;
  /** Of those, not recorded when checked. */
  missing: number;
  /** Recorded by this run (source `reconciled`, one job each). `missing - ingested` were recorded meanwhile by a
   * delivery racing this run (or it was a dry run). */
  ingested: number;
  /** Already recorded when checked; untouched. */
  alreadyPresent: number;
}

export interface ReconcileReport extends ReconcileCounts {
  byType: Record<string, ReconcileCounts>;
  since: Date;
  until?: Date;
  dryRun: boolean;
}
