/**
 * An effect's `log` carries its event and its name on every line it writes, for both kinds of effect; the child
 * logger behind it is made only for an effect that writes.
 */
import { Writable } from 'node:stream';
import { createDb, createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EffectRegistry } from '../../src/effects/registry.ts';
import { EffectRunner } from '../../src/effects/runner.ts';
import { external, type DatabaseEffectFn } from '../../src/effects/types.ts';
import { job, startProducer, type Producer } from '../support/harness.ts';

const db = useTestDatabase();
let pool: pg.Pool;
let producer: Producer;

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 4 });
  producer = await startProducer(pool, db.url);
});
afterAll(async () => {
  await producer.stop();
  await pool.end();
});

it("writes an effect's lines with its event and name, and makes a child logger only for an effect that writes", async () => {
  const lines: Record<string, unknown>[] = [];
  let children = 0;
  const logger = pino(
    { level: 'debug', onChild: () => void children++ },
    new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );

  const quietUnlessFirst: DatabaseEffectFn<{ eventId: string }> = ({ event, log }) => {
    if (event.eventId === 'evt_log_1') log.info({ rows: 1 }, 'database effect says');
  };
  const registry = new EffectRegistry();
  registry.add('test', ['signup'], {
    // Writes a line for the first event only; the others write nothing.
    quietUnlessFirst,
    notify: external<{ eventId: string }>({
      run: ({ event, log }) => {
        if (event.eventId === 'evt_log_2') log.warn('external effect says');
      },
    }),
    silent: async () => {},
  });
  const runner = new EffectRunner({ pool, db: createDb(pool), registry, logger });
  const eventIds = ['evt_log_1', 'evt_log_2', 'evt_log_3'];
  for (const eventId of eventIds) await producer.send({ eventId, type: 'signup' });
  expect(await runner.runBatch(eventIds.map(job))).toEqual(
    eventIds.map((eventId) => ({ id: `job-${eventId}`, status: 'completed' })),
  );

  const said = lines.filter((line) => String(line.msg).endsWith('says'));
  expect(said).toEqual([
    expect.objectContaining({
      provider: 'test',
      eventId: 'evt_log_1',
      effect: 'quietUnlessFirst',
      rows: 1,
      msg: 'database effect says',
    }),
    expect.objectContaining({
      provider: 'test',
      eventId: 'evt_log_2',
      effect: 'notify',
      msg: 'external effect says',
    }),
  ]);
  // Nine effects ran (three events, three effects each), each a line at debug; two of them wrote.
  const completed = lines.filter((line) => line.msg === 'effect completed');
  expect(completed).toHaveLength(9);
  expect(completed.every((line) => line.level === 20)).toBe(true);
  expect(children).toBe(2);
});
