/**
 * The welcome email over SMTP, on connections this module owns (nodemailer's `SMTPConnection`), so the effect's
 * last proof of its claim (`beforeSend`, the effect's `holdLease`) runs inside the SMTP transaction: after the
 * server accepted DATA, right before the message's bytes and its closing dot. A worker frozen anywhere before that
 * point and thawed after its claim was taken fails the proof, and the connection is dropped mid-DATA: an SMTP
 * server delivers nothing without the closing dot. Only a worker frozen between the proof and the write of those
 * bytes (no await in between) can still deliver one.
 *
 * Connections are kept open between messages (a send is then one MAIL/RCPT/DATA exchange, which keeps the window
 * between "sent" and "marked sent" short), at most `SMTP_CONNECTIONS` of them; a message waits for one before
 * anything of its transaction starts.
 */
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Logger } from 'pino';
import { traceSpan } from '@webhook-inbox/inbox/telemetry';
import { slots } from './slots.ts';
import type { MailMessage, Mailer, SendOptions } from './mailer.ts';

export const SMTP_CONNECTIONS = 10;

// A stuck server must fail the send (and the attempt) rather than hang it past the job's timeout.
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** nodemailer's codes for a connection that failed or was closed (not a refusal by the server). */
const LOST_CONNECTION = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT']);

export function smtpMailer(url: string, from: string, logger: Logger): Mailer {
  const { host, port, secure, auth } = parseConnectionUrl(url);
  const slot = slots(SMTP_CONNECTIONS);
  const idle = new Set<SMTPConnection>();
  const open = new Set<SMTPConnection>();

  async function connect(): Promise<SMTPConnection> {
    const connection = new SMTPConnection({ host, port, secure, ...TIMEOUTS, logger: false });
    open.add(connection);
    // A server that closes an idle connection (its own idle timeout) takes it out of the pool; errors during a
    // send reach that send's callback.
    const forget = () => {
      idle.delete(connection);
      open.delete(connection);
    };
    connection.on('error', forget);
    connection.once('end', forget);
    try {
      await new Promise<void>((resolve, reject) =>
        connection.connect((error) => (error ? reject(error) : resolve())),
      );
      if (auth) {
        await new Promise<void>((resolve, reject) =>
          connection.login(auth, (error) => (error ? reject(error) : resolve())),
        );
      }
    } catch (error) {
      connection.close();
      forget();
      throw error;
    }
    return connection;
  }

  /**
   * One message on `connection`; resolves with the server's answer. Rejects with `written: false` on the error when
   * nothing of the message went out (the proof was not reached). The connection goes back to the pool after a
   * success and is closed after a failure: mid-DATA without the closing dot the server drops the message, and any
   * other failure leaves the session in a state not worth recovering.
   */
  async function sendOn(
    connection: SMTPConnection,
    raw: Buffer,
    to: string,
    { beforeSend }: SendOptions,
  ): Promise<string> {
    let started = false;
    let written = false;
    let refused: Error | undefined;
    // Read by the connection only once the server answered DATA.
    const body = new Readable({
      read() {
        if (started) return;
        started = true;
        (beforeSend?.() ?? Promise.resolve()).then(
          () => {
            written = true;
            this.push(raw);
            this.push(null);
          },
          (error: unknown) => {
            refused = error instanceof Error ? error : new Error(String(error));
            this.destroy(refused);
          },
        );
      },
    });
    try {
      const response = await new Promise<string>((resolve, reject) => {
        connection.send({ from, to: [to] }, body, (error, info) => {
          if (refused) reject(refused);
          else if (error) reject(Object.assign(error, { written }));
          else resolve(info.response);
        });
      });
      if (open.has(connection)) idle.add(connection);
      return response;
    } catch (error) {
      connection.close();
      throw error;
    }
  }

  /** A kept connection the server closed while it was idle: nothing of the message went out. */
  const lostBeforeSending = (error: unknown) =>
    (error as { written?: boolean }).written === false &&
    LOST_CONNECTION.has((error as { code?: string }).code ?? '');

  return {
    async send(message: MailMessage, options: SendOptions = {}) {
      const raw = await new MailComposer({ from, ...message }).compile().build();
      const release = await slot();
      try {
        const response = await traceSpan('smtp send', { 'network.protocol.name': 'smtp' }, async () => {
          const reused = idle.values().next().value;
          if (!reused) return sendOn(await connect(), raw, message.to, options);
          idle.delete(reused);
          try {
            return await sendOn(reused, raw, message.to, options);
          } catch (error) {
            // It goes out over a new one.
            if (lostBeforeSending(error)) return sendOn(await connect(), raw, message.to, options);
            throw error;
          }
        });
        logger.debug({ messageId: message.messageId, response }, 'mail accepted by SMTP server');
      } finally {
        release();
      }
    },
    // Called once sends have ended: idle connections say QUIT, any other is closed.
    close() {
      for (const connection of open) {
        if (idle.has(connection)) connection.quit();
        else connection.close();
      }
      open.clear();
      idle.clear();
    },
  };
}
