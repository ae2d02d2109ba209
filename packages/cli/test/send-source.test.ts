import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { useTempFiles, useTestDatabase } from '@webhook-inbox/testing';
import { parseConfig, startReceiver, type Receiver } from '@webhook-inbox/receiver';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// `inbox send <source> <type>` signs for any source of the sources file, as a real process against a real
// receiver on the same file.
vi.setConfig({ testTimeout: 180_000 });

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const database = useTestDatabase();
const files = useTempFiles('cli-sources-');
const SOURCES = `
sources:
  github:
    type: hmac
    secrets: [gh-secret, gh-old]
    hmac: { header: X-Hub-Signature-256, prefix: "sha256=" }
    eventKey: { bodyHash: true }
    eventType: { header: X-GitHub-Event }
  twilio:
    type: hmac
    secrets: ["12345"]
    hmac: { header: X-Twilio-Signature, algorithm: sha1, encoding: base64, signed: "{url}{form}" }
    body: form
    publicUrl: http://127.0.0.1/webhooks/twilio
    eventKey: { pointer: /MessageSid }
    eventType: { pointer: /SmsStatus }
  adyen:
    type: basic-auth
    secrets: ["adyen:adyen-password-0123"]
    batch: { items: /notificationItems }
    eventKey: { pointer: [/NotificationRequestItem/eventCode, /NotificationRequestItem/pspReference] }
    eventType: { pointer: /NotificationRequestItem/eventCode }
    response: { body: "[accepted]" }
  sendgrid:
    type: api-key
    secrets: [sendgrid-token-0123456]
    apiKey: { query: token }
    batch: { items: "" }
    eventKey: { pointer: /sg_event_id }
    eventType: { pointer: /event }
  stripe-eu:
    type: stripe
    secrets: [whsec_cli_eu]
  gh-app:
    type: github
    secrets: [gh-app-secret]
  crm:
    type: hubspot
    secrets: [hubspot-client-secret]
    url: http://127.0.0.1/webhooks/crm
`;
let receiver: Receiver;
let pool: pg.Pool;
let file: string;

beforeAll(async () => {
  file = files.write('sources.yaml', SOURCES);
  receiver = await startReceiver(
    parseConfig({
      DATABASE_URL: database.url,
      PORT: '0',
      MANAGEMENT_PORT: '0',
      WEBHOOK_SOURCES_FILE: file,
      LOG_LEVEL: 'silent',
    }),
  );
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await receiver?.close();
  await pool?.end();
});

async function inbox(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { DATABASE_URL: _, ...base } = process.env;
  const env = {
    ...base,
    RECEIVER_URL: receiver.url,
    WEBHOOK_SOURCES_FILE: file,
    WEBHOOK_INBOX_DATA_DIR: '/nonexistent',
  };
  return promisify(execFile)(process.execPath, [main, ...args], { env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

describe('inbox send <source> <type>', () => {
  it.each([
    ['github', 'push', 'push'],
    ['twilio', 'delivered', 'delivered'],
    ['adyen', 'AUTHORISATION', 'AUTHORISATION'],
    ['sendgrid', 'open', 'open'],
    ['stripe-eu', 'checkout.session.completed', 'checkout.session.completed'],
    ['gh-app', 'push', 'push'],
    ['crm', 'contact.creation', 'contact.creation'],
  ])('%s: signed as its sender would, recorded under the source name', async (source, type, recordedType) => {
    const run = await inbox(['send', source, type, '--json']);
    expect(run.stderr).toBe('');
    const output = JSON.parse(run.stdout) as { deliveries: Array<{ status: number }> };
    expect(output.deliveries.map((d) => d.status)).toEqual([200]);
    const rows = await pool.query('select type from webhook_events where provider = $1', [source]);
    expect(rows.rows).toEqual([{ type: recordedType }]);
  });

  it("a catalogue source with --payload: that file, signed with the entry's sign function, is the body", async () => {
    const payload = files.write('pr.json', '{"action":"closed","number":7,"pull_request":{"id":1}}');
    const run = await inbox(['send', 'gh-app', 'pull_request', '--payload', payload, '--json']);
    expect(run.stderr).toBe('');
    expect((JSON.parse(run.stdout) as { deliveries: Array<{ status: number }> }).deliveries).toMatchObject([
      { status: 200 },
    ]);
    const rows = await pool.query(
      `select e.type, p.payload->>'number' as number
         from webhook_events e join webhook_event_payloads p using (provider, event_id, received_at)
        where e.provider = 'gh-app' and e.type <> 'push'`,
    );
    expect(rows.rows).toEqual([{ type: 'pull_request.closed', number: '7' }]);
  });

  it('an unknown source: a usage error naming the configured ones', async () => {
    const run = await inbox(['send', 'nope', 'x']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /no source named "nope" is configured \(known: stripe, shopify, github, twilio/,
    );
  });
});
