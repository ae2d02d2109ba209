import { createHash } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { traceSpan } from '@webhook-inbox/inbox/telemetry';
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** `<...@...>`; stable across retries (derived from the effect's idempotency key). */
  messageId: string;
}

export interface SendOptions {
  /**
   * Runs right before the message goes out, after any wait for a connection: the effect's `holdLease`, so a
   * worker that froze while its message waited sends nothing once its claim is gone. A throw sends nothing.
   */
  beforeSend?: () => Promise<void>;
}

export interface Mailer {
  /** Resolves once the SMTP server accepted the message (or the file is written). */
  send(message: MailMessage, options?: SendOptions): Promise<void>;
  close(): void;
}

export interface MailerOptions {
  /** `smtp://host:port` (or smtps://, with credentials); unset: `.eml` files in `dir`. */
  smtpUrl: string | undefined;
  from: string;
  dir: string;
  logger: Logger;
}

/**
 * The welcome-email transport. Over SMTP it keeps a small pool of connections open (a send is then one
 * MAIL/RCPT/DATA exchange, which keeps the window between "sent" and "marked sent" short), and hands nodemailer
 * no more messages than it has connections: a message waits for a connection here, before `beforeSend`, never
 * in nodemailer's queue after it. Without SMTP it writes each message to `<dir>/<hash of Message-ID>.eml`: a
 * repeated send overwrites the same file.
 */
export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl ? smtpMailer(options.smtpUrl, options) : fileMailer(options);
}

const SMTP_CONNECTIONS = 10;

function smtpMailer(url: string, { from, logger }: MailerOptions): Mailer {
  const connection = slots(SMTP_CONNECTIONS);
  const transport = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: SMTP_CONNECTIONS,
    maxMessages: Infinity,
    // A stuck server must fail the send (and the attempt) rather than hang it past the job's timeout.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    async send(message, options = {}) {
      const release = await connection();
      let info: { response: string };
      try {
        await options.beforeSend?.();
        // No maintained instrumentation covers nodemailer: our own client span, with no address or content in it.
        info = await traceSpan('smtp send', { 'network.protocol.name': 'smtp' }, () =>
          transport.sendMail({ from, ...message }),
        );
      } finally {
        release();
      }
      logger.debug({ messageId: message.messageId, response: info.response }, 'mail accepted by SMTP server');
    },
    close: () => transport.close(),
  };
}

function fileMailer({ from, dir, logger }: MailerOptions): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  let ready: Promise<unknown> | undefined;
  return {
    async send(message, options = {}) {
      await options.beforeSend?.();
      const info = await transport.sendMail({ from, ...message });
      const raw = info.message;
      if (!Buffer.isBuffer(raw)) throw new Error('nodemailer did not return the message as a buffer');
      await (ready ??= mkdir(dir, { recursive: true }));
      const name = createHash('sha256').update(message.messageId).digest('hex').slice(0, 32);
      const file = path.join(dir, `${name}.eml`);
      // Whole files only: a crash mid-write leaves a temporary file, never half a message under the final name.
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, raw);
      await rename(temporary, file);
      logger.info({ messageId: message.messageId, file }, 'mail written to file (SMTP_URL is not set)');
    },
    close: () => transport.close(),
  };
}

/** At most `n` holders at once: resolves, in order of asking, with the function that frees the slot. */
function slots(n: number): () => Promise<() => void> {
  let free = n;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return async () => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    return release;
  };
}
