/** What sends the welcome email: SMTP (`smtp-mailer.ts`) or `.eml` files (`mail.ts`). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** `<...@...>`; stable across retries (derived from the effect's idempotency key). */
  messageId: string;
}

export interface SendOptions {
  /**
   * Runs right before the message goes out: over SMTP inside the transaction, once the server accepted DATA
   * (`smtp-mailer.ts`). It is the effect's `holdLease`, so a worker that froze before that point sends nothing
   * once its claim is gone. A throw sends nothing.
   */
  beforeSend?: () => Promise<void>;
}

export interface Mailer {
  /** Resolves once the SMTP server accepted the message (or the file is written). */
  send(message: MailMessage, options?: SendOptions): Promise<void>;
  close(): void;
}
