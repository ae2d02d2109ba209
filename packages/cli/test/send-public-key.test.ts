import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { parseConfig, startReceiver, type Receiver } from '@webhook-inbox/receiver';
import { useTempFiles, useTestDatabase, selfSignedCertificate } from '@webhook-inbox/testing';
import { verifyKey } from 'discord-interactions';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// `inbox send --private-key` for the sources verified with a public key, as a real process against a real
// receiver. The requests pass through a loopback proxy that keeps their bytes, so the provider's own verifier
// (discord-interactions, @sendgrid/eventwebhook) checks what `send` signed.
vi.setConfig({ testTimeout: 180_000 });

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const database = useTestDatabase();
const files = useTempFiles('cli-public-key-');

const ed25519 = generateKeyPairSync('ed25519');
const ecdsa = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const rsa = selfSignedCertificate();
const DISCORD_KEY = ed25519.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
const SENDGRID_KEY = ecdsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const SNS_CERT = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-cli-test.pem';
const PAYPAL_CERT = 'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-cli-test';
const SOURCES = `
sources:
  discord:
    type: discord
    secrets: ["${DISCORD_KEY}"]
  sendgrid:
    type: sendgrid
    secrets: ["${SENDGRID_KEY}"]
  sns:
    type: aws-sns
    secrets: ["arn:aws:sns:us-east-1:123456789012:orders"]
  paypal:
    type: paypal
    secrets: ["8PT597110X687430LKGECATA"]
  github:
    type: github
    secrets: [gh-secret]
  interactions:
    type: ed25519
    secrets: ["${DISCORD_KEY}"]
    eventKey: { pointer: /id }
    eventType: { pointer: /type }
`;

let receiver: Receiver;
let proxy: Server;
let proxyUrl: string;
let pool: pg.Pool;
let sources: string;
const keys: Record<string, string> = {};
/** The requests the proxy passed on, by path. */
const seen = new Map<string, { body: string; headers: IncomingHttpHeaders }>();

beforeAll(async () => {
  sources = files.write('sources.yaml', SOURCES);
  keys.ed25519 = files.write(
    'ed25519.pem',
    ed25519.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
  keys.ecdsa = files.write('ecdsa.pem', ecdsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  keys.rsa = files.write('rsa.pem', rsa.privateKeyPem);
  keys.public = files.write(
    'public.pem',
    ed25519.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  );
  keys.garbage = files.write('garbage.pem', 'not a key at all');
  receiver = await startReceiver(
    parseConfig({
      DATABASE_URL: database.url,
      PORT: '0',
      MANAGEMENT_PORT: '0',
      WEBHOOK_SOURCES_FILE: sources,
      LOG_LEVEL: 'silent',
    }),
    {
      // The certificate host: the URLs given to --certificate-url serve the certificate of rsa.pem.
      certificateFetch: (url) =>
        Promise.resolve(
          [SNS_CERT, PAYPAL_CERT].includes(url)
            ? new Response(rsa.certificate)
            : new Response('', { status: 404 }),
        ),
    },
  );
  proxy = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.set(request.url ?? '', { body, headers: request.headers });
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0] !== 'host',
        ),
      );
      void fetch(`${receiver.url}${request.url ?? ''}`, { method: 'POST', body, headers }).then(
        async (answer) => response.writeHead(answer.status).end(await answer.text()),
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await receiver?.close();
  await pool?.end();
});

async function inbox(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { DATABASE_URL: _, ...base } = process.env;
  const env = { ...base, WEBHOOK_SOURCES_FILE: sources, WEBHOOK_INBOX_DATA_DIR: '/nonexistent' };
  return promisify(execFile)(process.execPath, [main, ...args, '--url', proxyUrl], { env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

async function recorded(source: string): Promise<Array<{ type: string }>> {
  const rows = await pool.query<{ type: string }>('select type from webhook_events where provider = $1', [
    source,
  ]);
  return rows.rows;
}

function sent(source: string): { body: string; header: (name: string) => string } {
  const request = seen.get(`/webhooks/${source}`);
  if (!request) throw new Error(`nothing was sent to ${source}`);
  return { body: request.body, header: (name) => String(request.headers[name]) };
}

describe('inbox send --private-key', () => {
  // The ed25519 template signs with the private key given to --private-key, as the discord type does.
  it.each([
    ['discord', 'APPLICATION_COMMAND'],
    ['interactions', 'form.sent'],
  ])(
    "%s: signed with the Ed25519 key, accepted by discord-interactions' verifyKey and recorded as %s",
    async (source, type) => {
      const run = await inbox(['send', source, type, '--private-key', keys.ed25519!]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const { body, header } = sent(source);
      expect(
        await verifyKey(body, header('x-signature-ed25519'), header('x-signature-timestamp'), DISCORD_KEY),
      ).toBe(true);
      expect(await recorded(source)).toEqual([{ type }]);
    },
  );

  it("sendgrid: signed with the P-256 key, accepted by @sendgrid/eventwebhook's verifySignature and recorded", async () => {
    const run = await inbox(['send', 'sendgrid', 'open', '--private-key', keys.ecdsa!]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const { body, header } = sent('sendgrid');
    const webhook = new EventWebhook();
    const verified = webhook.verifySignature(
      webhook.convertPublicKeyToECDSA(SENDGRID_KEY),
      body,
      header('x-twilio-email-event-webhook-signature'),
      header('x-twilio-email-event-webhook-timestamp'),
    );
    expect(verified).toBe(true);
    expect(await recorded('sendgrid')).toEqual([{ type: 'open' }]);
  });

  it.each([
    ['sns', SNS_CERT, 'Notification'],
    ['paypal', PAYPAL_CERT, 'PAYMENT.CAPTURE.COMPLETED'],
  ])(
    '%s: signed with the certificate key, naming --certificate-url, and recorded',
    async (source, url, type) => {
      const run = await inbox(['send', source, type, '--private-key', keys.rsa!, '--certificate-url', url]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const { body, header } = sent(source);
      expect(source === 'sns' ? body : header('paypal-cert-url')).toContain(url);
      expect(await recorded(source)).toEqual([{ type }]);
    },
  );

  it.each([
    [
      ['discord', 'APPLICATION_COMMAND'],
      /"discord" \(discord\) is verified with a public key: pass --private-key/,
    ],
    [
      ['discord', 'x', '--private-key', '/nonexistent/key.pem'],
      /--private-key: cannot read \/nonexistent\/key\.pem \(ENOENT\)/,
    ],
    [
      ['interactions', 'x'],
      /source "interactions" \(ed25519\) is verified with a public key: pass --private-key/,
    ],
    [['discord', 'x', '--private-key', 'GARBAGE'], /garbage\.pem holds no unencrypted PEM private key/],
    [['discord', 'x', '--private-key', 'PUBLIC'], /public\.pem holds no unencrypted PEM private key/],
    [
      ['discord', 'x', '--private-key', 'ECDSA'],
      /ecdsa\.pem holds an ec prime256v1 key; discord signs with an Ed25519 key/,
    ],
    [
      ['sendgrid', 'open', '--private-key', 'RSA'],
      /rsa\.pem holds an rsa key; sendgrid signs with an ECDSA P-256 key/,
    ],
    [
      ['sns', 'Notification', '--private-key', 'RSA'],
      /\(aws-sns\) fetches the signing certificate .*--certificate-url/,
    ],
    [
      ['github', 'push', '--private-key', 'RSA'],
      /are for sources verified with a public key .*"github" is of type github/,
    ],
  ])('refuses %j with exit 2, naming the file, never its content', async (args, message) => {
    const named = { GARBAGE: keys.garbage, PUBLIC: keys.public, ECDSA: keys.ecdsa, RSA: keys.rsa };
    const run = await inbox(['send', ...args.map((arg) => named[arg as keyof typeof named] ?? arg)]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/BEGIN|PRIVATE KEY|not a key at all/);
  });
});
