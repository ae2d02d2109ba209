/**
 * Scenario 11b, failover to a streaming replica with asynchronous replication: see support/failover.ts.
 */
import { it } from 'vitest';
import { runFailover } from './support/failover.ts';

it('asynchronous replication, the primary crashes under load: the acknowledged events lost are counted and redelivered, effects once', async () => {
  await runFailover({ synchronous: false });
});
