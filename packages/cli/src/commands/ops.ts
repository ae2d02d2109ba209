import { createSenderBoss } from '@webhook-inbox/inbox/boss';
import { auditPurge, auditReconcile } from '@webhook-inbox/operator/audit';
import { sinceDuration } from '@webhook-inbox/operator/duration';
import { reconcileStripe } from '@webhook-inbox/operator/reconcile';
import { purgeExpired } from '@webhook-inbox/operator/retention';
import { MIN_PAYLOAD_DAYS, RetentionOptionError } from '@webhook-inbox/operator/retention-options';
import { ensureQueues } from '@webhook-inbox/inbox/queue';
import type Stripe from 'stripe';
import type { CliContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import { printJson } from '../output.ts';

const DAY_MS = 86_400_000;

// One `now` for both readings: two clock reads a millisecond apart would turn `1ms` into zero days.
function days(flag: string, duration: string): number {
  const now = new Date();
  try {
    return (now.getTime() - sinceDuration(duration, now).getTime()) / DAY_MS;
  } catch (error) {
    throw new UsageError(`${flag}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export interface PurgeCliOptions {
  olderThan: string;
  keysOlderThan: string;
  force: boolean;
  dryRun: boolean;
  json: boolean;
}

/**
 * Payloads of finished events older than --older-than are dropped (whole days); keys older than --keys-older-than
 * go. An age the library refuses (under the retry window without --force, keys under 7 days) is a usage error:
 * nothing is touched.
 */
export async function purge(context: CliContext, options: PurgeCliOptions): Promise<void> {
  let result;
  const pool = await context.pool();
  try {
    result = await purgeExpired(pool, {
      payloadDays: days('--older-than', options.olderThan),
      keyDays: days('--keys-older-than', options.keysOlderThan),
      force: options.force,
      dryRun: options.dryRun,
    });
  } catch (error) {
    if (error instanceof RetentionOptionError && error.code === 'below_retry_window') {
      throw new UsageError(
        `--older-than ${options.olderThan} is under ${MIN_PAYLOAD_DAYS} days, the providers' retry window: it ` +
          `would drop the payload of every finished event older than that, including dead events you may still ` +
          `want to replay. Check the unit (1m is a minute, 1w a week), try --dry-run, or pass --force.`,
      );
    }
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
  const { olderThan, keysOlderThan, force } = options;
  await auditPurge(pool, context.principal(), { olderThan, keysOlderThan, force }, result);
  if (options.json) printJson(result);
  else if (result.dryRun)
    process.stdout.write(
      `dry run: nothing was changed. A purge now would:\n` +
        `  webhook_events: delete ${result.keysDeleted} events (received before ${result.keyCutoff.toISOString()})\n` +
        `  webhook_event_payloads: drop ${result.payloadsPurged} payloads (days ended before ${result.payloadCutoff.toISOString()})\n` +
        `  effect_runs: delete ${result.effectRunsDeleted} rows (the ledger of those events)\n`,
    );
  else
    process.stdout.write(
      `payloads purged: ${result.payloadsPurged} (days ended before ${result.payloadCutoff.toISOString()}: ` +
        `${result.payloadPartitionsDropped} dropped whole` +
        (result.payloadPartitionsKept > 0
          ? `, ${result.payloadPartitionsKept} kept for events still in flight`
          : '') +
        `)\n` +
        `event keys deleted: ${result.keysDeleted} (received before ${result.keyCutoff.toISOString()}), ` +
        `with ${result.effectRunsDeleted} effect_runs rows\n` +
        `took ${result.durationMs} ms: ${Object.entries(result.phaseMs)
          .map(([phase, ms]) => `${phase} ${ms} ms`)
          .join(', ')}\n` +
        (result.complete ? '' : 'stopped early (rows locked or batches too slow); run again to finish\n'),
    );
}

export interface ReconcileCliOptions {
  since: string;
  dryRun: boolean;
  json: boolean;
}

/** Lists Stripe's events since --since and records, through the receiver's ingest path, any we never got. */
export async function reconcile(
  context: CliContext,
  provider: string,
  options: ReconcileCliOptions,
): Promise<void> {
  if (provider !== 'stripe')
    throw new UsageError(`reconciliation is available for stripe only, not "${provider}"`);
  const apiKey = context.stripeApiKey();
  if (!apiKey) throw new UsageError('STRIPE_API_KEY is not set: reconciliation reads Stripe’s Events API');
  let since: Date;
  try {
    since = sinceDuration(options.since);
  } catch (error) {
    throw new UsageError(`--since: ${error instanceof Error ? error.message : String(error)}`);
  }
  // Loaded here, not at start-up: the SDK is large and only this command needs it.
  const { default: StripeClient } = await import('stripe');
  const boss = createSenderBoss(context.databaseUrl(), { applicationName: 'webhook-inbox-cli' });
  await boss.start();
  try {
    await ensureQueues(boss);
    const pool = await context.pool();
    const report = await reconcileStripe({
      stripe: new StripeClient(apiKey, stripeClientOptions(context)),
      pool,
      boss,
      since,
      dryRun: options.dryRun,
      logger: {
        info: () => {},
        warn: (...args: unknown[]) => process.stderr.write(`${JSON.stringify(args)}\n`),
      },
    });
    await auditReconcile(pool, context.principal(), report);
    if (options.json) printJson(report);
    else {
      process.stdout.write(
        `scanned ${report.scanned} Stripe events since ${report.since.toISOString()}: ` +
          `${report.alreadyPresent} already recorded, ${report.missing} missing, ` +
          (options.dryRun
            ? `${report.missing} would be recorded (dry run)\n`
            : `${report.ingested} recorded now\n`),
      );
      for (const [type, counts] of Object.entries(report.byType)) {
        if (counts.missing) process.stdout.write(`  ${type}: ${counts.missing} missing\n`);
      }
    }
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

/** STRIPE_API_BASE (tests, stripe-mock): point the official SDK at another server. */
function stripeClientOptions(context: CliContext): Stripe.StripeConfig {
  const base = context.stripeApiBase();
  if (!base) return {};
  const url = new URL(base);
  return {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    protocol: url.protocol === 'https:' ? 'https' : 'http',
  };
}
