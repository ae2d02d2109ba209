/**
 * Scenario 11a, failover to a streaming replica with synchronous replication: see support/failover.ts.
 */
import { it } from 'vitest';
import { runFailover } from './support/failover.ts';

it('synchronous replication, the primary crashes under load: nothing acknowledged lost, no 2xx without a primary, effects once', async () => {
  await runFailover({ synchronous: true });
});
