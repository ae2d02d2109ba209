import { createHash } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Mailer } from './mailer.ts';
import { smtpMailer } from './smtp-mailer.ts';

export type { MailMessage, Mailer, SendOptions } from './mailer.ts';

export interface MailerOptions {
  /** `smtp://host:port` (or smtps://, with credentials); unset: `.eml` files in `dir`. */
  smtpUrl: string | undefined;
  from: string;
  dir: string;
  logger: Logger;
}

/**
 * The welcome-email transport: SMTP over connections kept open (`smtp-mailer.ts`), or, without SMTP, each message
 * written to `<dir>/<hash of Message-ID>.eml`: a repeated send overwrites the same file.
 */
export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl ? smtpMailer(options.smtpUrl, options.from, options.logger) : fileMailer(options);
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
