import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthThrottle } from '../../src/access/throttle.ts';

// The throttle's statements on a real database: two pools (two receivers) racing for one client's row.

const db = useTestDatabase();
const OPTIONS = { scope: 'test_scope', maxFailures: 5, windowSeconds: 900 };
let pools: pg.Pool[];

beforeAll(() => {
  pools = [
    createPool({ connectionString: db.url, max: 8 }),
    createPool({ connectionString: db.url, max: 8 }),
  ];
});
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

describe('createAuthThrottle', () => {
  it('allows exactly maxFailures of 100 concurrent refusals from two receivers, then even a right secret waits', async () => {
    const throttles = pools.map((pool) => createAuthThrottle(pool, OPTIONS));
    const verdicts = await Promise.all(
      Array.from({ length: 100 }, (_, i) => throttles[i % 2]!.refused('203.0.113.5')),
    );
    expect(verdicts.filter((verdict) => verdict.allowed)).toHaveLength(OPTIONS.maxFailures);
    const throttled = await throttles[0]!.accepted('203.0.113.5');
    expect(throttled).toMatchObject({ allowed: false });
    expect(throttled.allowed === false && throttled.retryAfterSeconds).toBeGreaterThan(
      OPTIONS.windowSeconds - 120,
    );
    // Another client, another scope: their own counts.
    expect(await throttles[0]!.accepted('203.0.113.6')).toEqual({ allowed: true });
    expect(
      await createAuthThrottle(pools[0]!, { ...OPTIONS, scope: 'other' }).refused('203.0.113.5'),
    ).toEqual({
      allowed: true,
    });
  });

  it('starts a new window once the last one ended, and deletes the ended rows then', async () => {
    const throttle = createAuthThrottle(pools[0]!, OPTIONS);
    for (let i = 0; i < OPTIONS.maxFailures + 1; i++) await throttle.refused('198.51.100.1');
    await throttle.refused('198.51.100.2');
    expect(await throttle.accepted('198.51.100.1')).toMatchObject({ allowed: false });
    // Both windows end.
    await pools[0]!.query(`update auth_failures set resets_at = now() - interval '1 second'`);
    expect(await throttle.accepted('198.51.100.1')).toEqual({ allowed: true });
    expect(await throttle.refused('198.51.100.1')).toEqual({ allowed: true });
    const { rows } = await pools[0]!.query<{ client: string; failures: number }>(
      `select client, failures from auth_failures where scope = $1 order by client`,
      [OPTIONS.scope],
    );
    // The new window counts 1; the other client's ended row is gone.
    expect(rows).toEqual([{ client: '198.51.100.1', failures: 1 }]);
  });
});
