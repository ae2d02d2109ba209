/**
 * Scenario 11b, failover to a streaming replica with asynchronous replication: see support/failover.ts.
 *
 * It runs only with CHAOS_FAILOVER_ASYNC=1, outside CI: it finds an open defect (issue 34). After the failover,
 * some of the events the provider redelivers end `processed` on the new primary with none of their database
 * effects (the ledger and the product tables agree with each other, and lack them); it fails in about half of
 * its runs.
 */
import { it } from 'vitest';
import { runFailover } from './support/failover.ts';

it.runIf(process.env['CHAOS_FAILOVER_ASYNC'] === '1')(
  'asynchronous replication, the primary crashes under load: the acknowledged events lost are counted and redelivered, effects once',
  async () => {
    await runFailover({ synchronous: false });
  },
);
