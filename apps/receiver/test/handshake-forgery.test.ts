import { describe, expect, it } from 'vitest';
import { sql } from './helpers.ts';
import { codeOf, request, useSourcesReceiver } from './sources-fixture.ts';

// An unsigned handshake must never hand out what a signature is: over real HTTP against a receiver on a real
// PostgreSQL, the attacker asks the handshake for the answer to a body it chose, then posts that body with the
// answer as its signature. Nothing may be recorded.

const sources = useSourcesReceiver();

async function rowsOf(provider: string): Promise<number> {
  const result = await sql(
    sources.db.url,
    'select count(*)::int as n from webhook_events where provider = $1',
    [provider],
  );
  return (result.rows[0] as { n: number }).n;
}

describe('X CRC is not a signing oracle', () => {
  // Each is a body the x source would record (JSON, keyed by its hash) if it were signed.
  const forgedBodies = ['{"for_user_id":"1","tweet_create_events":[{"id":"9"}]}', '[]', '123', 'true', ' {}'];

  it.each(forgedBodies)(
    'refused: the CRC of the JSON body %j, then that body posted with it as signature (was recorded before)',
    async (body) => {
      const before = await rowsOf('x');
      const crc = await request(sources.receiver.url, `/webhooks/x?crc_token=${encodeURIComponent(body)}`, {
        method: 'GET',
      });
      // Had it answered, this is the forgery: the response token is X's signature header of that body.
      const token =
        crc.status === 200 ? (JSON.parse(crc.body) as { response_token: string }).response_token : '';
      const forged = await request(sources.receiver.url, '/webhooks/x', {
        body,
        headers: { 'content-type': 'application/json', 'x-twitter-webhooks-signature': token },
      });
      expect(await rowsOf('x')).toBe(before);
      expect(forged.status).toBe(400);
      expect({ status: crc.status, code: codeOf(crc) }).toEqual({ status: 400, code: 'invalid_payload' });
    },
  );

  it('refused: a crc_token of characters X never sends, or longer than X sends', async () => {
    for (const token of ['a b c d e f', 'abc&def=ghi', 'x'.repeat(256), 'short']) {
      const answer = await request(
        sources.receiver.url,
        `/webhooks/x?crc_token=${encodeURIComponent(token)}`,
        {
          method: 'GET',
        },
      );
      expect({ token, status: answer.status, code: codeOf(answer) }).toEqual({
        token,
        status: 400,
        code: 'invalid_payload',
      });
    }
  });

  it("answers X's own kind of token (base64url, tens of characters)", async () => {
    const answer = await request(
      sources.receiver.url,
      '/webhooks/x?crc_token=NzM0YTJmZjAtOWI2Ny00YjE5LWE1Mjkt',
      {
        method: 'GET',
      },
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toHaveProperty('response_token');
  });
});
