import { ensureQueues } from '@webhook-inbox/inbox';
import {
  post,
  receiverEnv,
  spawnReceiver,
  stripeEventOf,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';
import {
  startWebhookSink,
  startTestBoss,
  TcpProxy,
  useTestDatabase,
  waitFor,
  type Sink,
} from '@webhook-inbox/testing';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startCli, type RunningCli } from './cli-process.ts';

// `webhook-inbox listen` as a real process against a real receiver process, through a TCP proxy the test cuts:
// every event posted while listening reaches the local sink once, verified by the official Standard Webhooks
// package with the listen secret, although the connection is dropped mid-batch (forwarded, not yet acknowledged)
// and the receiver is restarted meanwhile; a token of another consumer group forwards none of them.

// Two receivers and two CLIs start in this file: a process start is seconds on a loaded machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 180_000 });

const ADMIN_TOKEN = 'cli-listen-admin-token-0123456789';
const SECRET = `whsec_${Buffer.from('cli-listen-test-secret-32-bytes!').toString('base64')}`;
const database = useTestDatabase();
let receiver: SpawnedReceiver | undefined;
let proxy: TcpProxy | undefined;
let pool: pg.Pool | undefined;
const sinks: Sink[] = [];
const clis: RunningCli[] = [];
const tokens: Record<string, string> = {};

const env = () => receiverEnv(database.url, { ADMIN_TOKEN, LOG_LEVEL: 'warn' });

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // The billing group's queues, which its worker would create: the receiver sends its events there.
  const boss = await startTestBoss(database.url);
  await ensureQueues(boss, undefined, 'billing');
  await boss.stop({ graceful: false, close: true });
  await pool.query(`
    insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
      ('stripe', 'checkout.session.completed', 'fulfil', 'database', 0, 'default'),
      ('stripe', 'invoice.paid', 'syncLedger', 'database', 0, 'billing')`);
  receiver = await spawnReceiver(env());
  proxy = await TcpProxy.start(receiver.managementUrl);
  for (const group of ['default', 'billing']) {
    const response = await fetch(new URL('/admin/tokens', receiver.managementUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${group}-dev`, role: 'operator', groups: [group] }),
    });
    expect(response.status).toBe(201);
    tokens[group] = ((await response.json()) as { token: string }).token;
  }
});
afterAll(async () => {
  await Promise.all(clis.map((cli) => cli.stop()));
  await Promise.all(sinks.map((sink) => sink.close()));
  await proxy?.close();
  await receiver?.stop();
  await pool?.end();
});

async function record(type: string): Promise<string> {
  const delivery = stripeEventOf(type);
  const answer = await post(receiver!.url, delivery);
  expect(answer.status, answer.body).toBe(200);
  return delivery.key;
}

function listen(sink: Sink, group: string): RunningCli {
  const cli = startCli(
    ['listen', '--forward-to', sink.url, '--url', proxy!.url(receiver!.managementUrl), '--group', group],
    { WEBHOOK_INBOX_TOKEN: tokens[group], WEBHOOK_INBOX_LISTEN_SECRET: SECRET, DATABASE_URL: '' },
  );
  clis.push(cli);
  return cli;
}

/** The event keys the sink received, in order, each request verified with the listen secret. */
function verifiedKeys(sink: Sink): string[] {
  return sink.requests.map((request) => {
    const verified = new Webhook(SECRET).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as { key: string; id: string };
    expect(verified.id).toBe(request.headers['webhook-id']);
    return verified.key;
  });
}

describe('webhook-inbox listen --forward-to', () => {
  it('forwards every event once, signed, across a dropped connection and a receiver restart; another group forwards none', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // The third request's answer is held: the CLI is mid-batch (forwarded, not acknowledged) when the cut comes.
    const sink = await startWebhookSink(async (_request, index) => {
      if (index === 2) await held;
      return { status: 200, body: 'ok' };
    });
    const billingSink = await startWebhookSink();
    sinks.push(sink, billingSink);
    const cli = listen(sink, 'default');
    const billing = listen(billingSink, 'billing');
    await waitFor(() => cli.stdout().includes('Ready!') && billing.stdout().includes('Ready!'), {
      timeout: 120_000,
      message: `both listeners ready:\n${cli.stderr()}\n${billing.stderr()}`,
    });
    expect(cli.stdout()).toContain(`Your webhook signing secret is ${SECRET}`);

    const before: string[] = [];
    for (let i = 0; i < 6; i++) before.push(await record('checkout.session.completed'));
    await waitFor(() => sink.requests.length === 3 && sink.inFlight() === 1, {
      timeout: 60_000,
      message: 'the third forward held',
    });
    await proxy!.cut();
    release();
    await receiver!.stop();
    receiver = await spawnReceiver(env());
    proxy!.retarget(receiver.managementUrl);
    const during: string[] = [];
    for (let i = 0; i < 4; i++) during.push(await record('checkout.session.completed'));
    const invoice = await record('invoice.paid');
    await proxy!.restore();

    await waitFor(() => new Set(verifiedKeys(sink)).size === before.length + during.length, {
      timeout: 120_000,
      message: `every event forwarded:\n${cli.stdout()}\n${cli.stderr()}`,
    });
    // A repeat of any of them would come before this one: the server sends the oldest unacknowledged first.
    const last = await record('checkout.session.completed');
    await waitFor(() => verifiedKeys(sink).includes(last), { timeout: 60_000, message: 'the last event' });
    await waitFor(() => billingSink.requests.length > 0, { timeout: 60_000, message: 'the invoice' });

    expect(verifiedKeys(sink).toSorted()).toEqual([...before, ...during, last].toSorted());
    expect(new Set(sink.requests.map((r) => r.headers['webhook-id'])).size).toBe(sink.requests.length);
    expect(verifiedKeys(billingSink)).toEqual([invoice]);
    expect(cli.stderr()).toContain('lost');
    expect(cli.stdout()).toContain('reconnected');

    expect(await cli.stop()).toBe(0);
    expect(await billing.stop()).toBe(0);
    expect(cli.stdout()).toContain('stopped: 11 events forwarded');
    expect(sink.requests).toHaveLength(11);
    const left = await pool!.query('select count(*)::int as n from listeners');
    expect(left.rows).toEqual([{ n: 0 }]);
  });
});
