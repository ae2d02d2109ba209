/**
 * The SMTP mailer against a real SMTP server: the effect's last proof of its claim runs inside the transaction
 * (after the server accepted DATA), a failed proof delivers nothing, and a kept connection the server dropped while
 * idle does not cost a message.
 */
import net from 'node:net';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import pino from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LeaseLostError } from '@webhook-inbox/inbox';
import { createMailer, type Mailer } from '../src/mail.ts';

let smtp: SmtpSink;
let mailer: Mailer | undefined;

beforeEach(async () => {
  smtp = await startSmtpSink();
});

afterEach(async () => {
  mailer?.close();
  mailer = undefined;
  await smtp.close();
});

const message = (n: number) => ({
  to: `user${n}@example.test`,
  subject: 'Welcome aboard',
  text: `hello ${n}`,
  messageId: `<m${n}@example.test>`,
});

function smtpMailer(url: string): Mailer {
  return createMailer({
    smtpUrl: url,
    from: 'welcome@example.test',
    dir: '',
    logger: pino({ level: 'silent' }),
  });
}

it('proves the claim inside the SMTP transaction, once the server has accepted DATA', async () => {
  mailer = smtpMailer(smtp.url);
  const seen: number[] = [];
  await mailer.send(message(1), {
    beforeSend: () => Promise.resolve(void seen.push(smtp.openTransactions())),
  });
  // The transaction was open (MAIL FROM read) when the proof ran, and nothing had been delivered yet.
  expect(seen).toEqual([1]);
  expect(smtp.messages.map((m) => m.messageId)).toEqual(['<m1@example.test>']);
});

it('delivers nothing when the proof fails, and the next message goes out on a new connection', async () => {
  mailer = smtpMailer(smtp.url);
  await mailer.send(message(1));
  const lost = new LeaseLostError('the claim was taken by another attempt');
  await expect(mailer.send(message(2), { beforeSend: () => Promise.reject(lost) })).rejects.toBe(lost);
  await mailer.send(message(3));
  expect(smtp.messages.map((m) => m.messageId)).toEqual(['<m1@example.test>', '<m3@example.test>']);
});

it('sends over a new connection when the server closed a kept one while it was idle', async () => {
  // A proxy in front of the sink that drops a kept connection at the next command it carries, as a server whose
  // idle timeout closed it just as the client began a transaction on it.
  const sockets = new Set<net.Socket>();
  let dropNext = false;
  let dropped = 0;
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(new URL(smtp.url).port), '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => {
      if (dropNext) {
        dropNext = false;
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as net.AddressInfo).port;
  try {
    mailer = smtpMailer(`smtp://127.0.0.1:${port}`);
    await mailer.send(message(1));
    dropNext = true;
    await mailer.send(message(2));
    expect(dropped).toBe(1);
    expect(smtp.messages.map((m) => m.messageId)).toEqual(['<m1@example.test>', '<m2@example.test>']);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  }
});
