import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { effectRuns, eventRow, useWorkerHarness } from '../support/harness.ts';
import { createInbox } from '../../src/inbox.ts';

// What a failed database effect leaves in `last_error`: PostgreSQL's own cause, never the query's values.

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);
const CUSTOMER = 'cus_secret_4242';
const AMOUNT = 987_654_321;

beforeAll(async () => {
  await harness.pool.query(
    `create table if not exists paid_invoices (customer_id text not null, amount bigint not null,
       constraint paid_invoices_customer_key unique (customer_id))`,
  );
  await harness.pool.query('insert into paid_invoices values ($1, 1)', [CUSTOMER]);
});

describe('last_error of a failed database effect', () => {
  it("keeps PostgreSQL's message, code, constraint and table, and none of the parameter values", async () => {
    await harness.start(
      createInbox().on('test', 'invoice.paid', {
        recordInvoice: async ({ tx }) => {
          await tx.execute(sql`insert into paid_invoices values (${CUSTOMER}, ${AMOUNT})`);
        },
      }),
    );
    await harness.producer.send({ eventId: 'evt_dup_invoice', type: 'invoice.paid' });
    await waitFor(async () => (await eventRow(harness.pool, 'evt_dup_invoice'))?.status === 'dead', {
      timeout: 30_000,
      message: 'evt_dup_invoice dead after its retries',
    });

    const run = (await effectRuns(harness.pool, 'evt_dup_invoice')).recordInvoice;
    const event = await eventRow(harness.pool, 'evt_dup_invoice');
    for (const lastError of [run?.last_error, event?.last_error]) {
      expect(lastError).toContain(
        'duplicate key value violates unique constraint "paid_invoices_customer_key"',
      );
      expect(lastError).toContain('23505');
      expect(lastError).toContain('table paid_invoices');
      expect(lastError).toContain('constraint paid_invoices_customer_key');
      expect(lastError).not.toContain(CUSTOMER);
      expect(lastError).not.toContain(String(AMOUNT));
      expect(lastError).not.toMatch(/params:/);
    }
  });

  it("keeps the database's cause under the effect's own error", async () => {
    await harness.start(
      createInbox().on('test', 'invoice.wrapped', {
        recordWrapped: async ({ tx }) => {
          try {
            await tx.execute(sql`insert into paid_invoices values (${CUSTOMER}, ${AMOUNT})`);
          } catch (error) {
            throw new Error('could not record the invoice', { cause: error });
          }
        },
      }),
    );
    await harness.producer.send({ eventId: 'evt_wrapped_invoice', type: 'invoice.wrapped' });
    await waitFor(async () => (await eventRow(harness.pool, 'evt_wrapped_invoice'))?.status === 'dead', {
      timeout: 30_000,
      message: 'evt_wrapped_invoice dead after its retries',
    });
    const lastError = (await effectRuns(harness.pool, 'evt_wrapped_invoice')).recordWrapped?.last_error;
    expect(lastError).toBe(
      'could not record the invoice: duplicate key value violates unique constraint "paid_invoices_customer_key" ' +
        '(23505, table paid_invoices, constraint paid_invoices_customer_key)',
    );
  });
});
