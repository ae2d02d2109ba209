import type { PgBoss } from 'pg-boss';

/** Jobs for `queue`, inserted 500 at a time (`boss.insert`): a backlog of thousands in a few statements. */
export async function insertJobs(
  boss: PgBoss,
  queue: string,
  jobs: ReadonlyArray<{ data: object }>,
): Promise<void> {
  for (let i = 0; i < jobs.length; i += 500) await boss.insert(queue, jobs.slice(i, i + 500));
}
