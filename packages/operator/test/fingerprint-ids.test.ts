import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeErrorMessage } from '../src/alerts/model.ts';

// Failure groups name causes: four causes whose messages carry provider ids of every shape (Stripe ids with or
// without digits, Shopify numbers and gids, GitHub node ids and delivery GUIDs, UUIDs, bare base62 ids) give
// exactly four fingerprints, in TypeScript (the alerts) and in SQL (the ledger's `effect_error_fingerprint`) alike.

const db = useTestDatabase();
let pool: pg.Pool;
beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: 2 });
});
afterAll(async () => pool.end());

const BASE62 = [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'];
const base62 = (min: number, max: number) =>
  fc.array(fc.constantFrom(...BASE62), { minLength: min, maxLength: max }).map((c) => c.join(''));
const base64url = (min: number, max: number) =>
  fc.array(fc.constantFrom(...BASE62, '-', '_'), { minLength: min, maxLength: max }).map((c) => c.join(''));

/** `cus_IaTagvBaGokTj`, `evt_1Q...`, `cs_test_...`: a Stripe prefix and a base62 body of any letters. */
const stripeId = fc
  .tuple(
    fc.constantFrom(
      'cus',
      'evt',
      'pi',
      'ch',
      'in',
      'sub',
      'price',
      'prod',
      'pm',
      'seti',
      'cs',
      'acct',
      'txn',
    ),
    fc.constantFrom('', '_test', '_live'),
    base62(14, 24),
  )
  .map(([prefix, mode, body]) => `${prefix}${mode}_${body}`);
/** A Shopify numeric id (any length up to 2^63) and an order's Admin API gid. */
const shopifyNumber = fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String);
const shopifyGid = shopifyNumber.map((n) => `gid://shopify/Order/${n}`);
/** A GitHub node id: current (`PR_kwDO...`) or legacy (base64 of `04:User583231`). */
const githubNodeId = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('PR', 'I', 'U', 'R', 'IC', 'PRR'),
      fc.constantFrom('kwDO', 'kgDO'),
      base64url(6, 20),
    )
    .map(([prefix, kind, body]) => `${prefix}_${kind}${body}`),
  fc
    .tuple(fc.nat(99), fc.constantFrom('User', 'Repository', 'Issue'), fc.nat())
    .map(([version, type, n]) => Buffer.from(`0${version}:${type}${n}`).toString('base64')),
);
/** A bare base62 id: 16 characters and more, letters and digits both present. */
const bareId = base62(16, 32).filter((id) => /\d/.test(id) && /[A-Za-z]/.test(id));

/** Four causes, each a message around its provider's ids. */
const CAUSES: ReadonlyArray<fc.Arbitrary<string>> = [
  stripeId.map((id) => `No such customer: '${id}' (resource_missing)`),
  fc
    .tuple(shopifyGid, shopifyNumber)
    .map(([gid, n]) => `Shopify order ${gid} (#${n}) has no fulfillment order`),
  fc
    .tuple(githubNodeId, fc.uuid())
    .map(([node, guid]) => `pull request ${node} of delivery ${guid} is not mergeable`),
  fc.tuple(fc.uuid(), bareId).map(([uuid, id]) => `ledger entry ${uuid} conflicts with batch ${id}`),
];

async function fingerprintsInSql(messages: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ fp: string }>(
    `select effect_error_fingerprint(m) as fp from unnest($1::text[]) with ordinality t(m, i) order by i`,
    [messages],
  );
  return rows.map((r) => r.fp);
}

describe('fingerprints of provider ids', () => {
  it('four causes, three occurrences each with other ids: exactly four groups, the same in SQL', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(...CAUSES.map((cause) => fc.tuple(cause, cause, cause))),
        async (occurrences) => {
          const messages = occurrences.flat();
          const fingerprints = messages.map(normalizeErrorMessage);
          expect(await fingerprintsInSql(messages)).toEqual(fingerprints);
          // Each cause's occurrences are one group; the four causes are four.
          for (let cause = 0; cause < 4; cause++) {
            expect(new Set(fingerprints.slice(cause * 3, cause * 3 + 3)).size).toBe(1);
          }
          expect(new Set(fingerprints).size).toBe(4);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps what names a cause: error codes, words, a short id', () => {
    expect(
      [
        'No such customer: cus_IaTagvBaGokTj (resource_missing)',
        'ERR_INVALID_URL: Invalid URL',
        'invalid_request_error: card_declined',
        'connect ECONNREFUSED 127.0.0.1:5432',
        'order 1234567890123 of gid://shopify/Order/12 failed',
      ].map(normalizeErrorMessage),
    ).toEqual([
      'No such customer: <id> (resource_missing)',
      'ERR_INVALID_URL: Invalid URL',
      'invalid_request_error: card_declined',
      'connect ECONNREFUSED <n>.<n>.<n>.<n>:<n>',
      'order <n> of gid://shopify/Order/<n> failed',
    ]);
  });
});
