import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  messageId: string;
  to: string;
  subject: string;
  text: string;
  /** The port of the client that sent it (a proxy in front of one worker tells that worker's messages apart). */
  clientPort: number;
  /** When its transaction began (the server read MAIL FROM), ms since the epoch. */
  mailFromAt: number;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` */
  readonly url: string;
  /** Parsed messages (empty with `parse: false`). */
  readonly messages: ReceivedMail[];
  /** Messages accepted, parsed or not. */
  received(): number;
  /** How many times each Message-ID arrived. */
  counts(): Map<string, number>;
  /** Messages beyond the first for each Message-ID. */
  duplicates(): number;
  /**
   * Messages read whose acknowledgement has not been sent yet (delayed or held): delivered, and the sender does
   * not know it. Only those of connections from `ports` (the client side's ports), when given.
   */
  unacknowledged(ports?: readonly number[]): number;
  /**
   * Transactions open now: MAIL FROM read, and the message not yet acknowledged (being sent, or read and its answer
   * held or delayed). Only those of connections from `ports`, when given.
   */
  openTransactions(ports?: readonly number[]): number;
  close(): Promise<void>;
}

/**
 * A real SMTP server on loopback that keeps every message it accepts, parsed. A message counts as delivered once
 * the server has read it completely, as a real MTA would have it, even if the client never sees the reply.
 */
export async function startSmtpSink(
  options: {
    /** How long the server takes to acknowledge each message. */
    delayMs?: () => number;
    /**
     * The acknowledgement waits for this too: the test decides when a send in flight may end. `clientPort`: the
     * port the message came from.
     */
    hold?: (clientPort: number) => Promise<void>;
    parse?: boolean;
  } = {},
): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  let received = 0;
  /** The client port of each message read and not yet acknowledged. */
  const unacknowledged: number[] = [];
  /** When the open transaction of each session began (MAIL FROM), by session id, and its client port. */
  const transactions = new Map<string, { at: number; port: number }>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // No reverse DNS of 127.0.0.1 per connection (hundreds of ms on some machines).
    disableReverseLookup: true,
    logger: false,
    onMailFrom(_address, session, callback) {
      transactions.set(session.id, { at: Date.now(), port: session.remotePort });
      callback();
    },
    onClose(session) {
      transactions.delete(session.id);
    },
    onData(stream, session, callback) {
      const mailFromAt = transactions.get(session.id)?.at ?? Date.now();
      const end = (error?: Error | null) => {
        transactions.delete(session.id);
        callback(error);
      };
      if (options.parse === false) {
        // Benchmarks: read the message, count it, keep nothing.
        stream.on('end', () => {
          received++;
          end();
        });
        stream.resume();
        return;
      }
      simpleParser(stream).then(
        (mail) => {
          const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(', ') : (mail.to?.text ?? '');
          messages.push({
            messageId: mail.messageId ?? '',
            to,
            subject: mail.subject ?? '',
            text: mail.text ?? '',
            clientPort: session.remotePort,
            mailFromAt,
          });
          unacknowledged.push(session.remotePort);
          const acknowledge = (error?: Error) => {
            unacknowledged.splice(unacknowledged.indexOf(session.remotePort), 1);
            end(error);
          };
          const delay = options.delayMs?.() ?? 0;
          const delayed = () => (delay > 0 ? setTimeout(() => acknowledge(), delay) : acknowledge());
          if (options.hold)
            options.hold(session.remotePort).then(delayed, (error: Error) => acknowledge(error));
          else delayed();
        },
        (error: Error) => end(error),
      );
    },
  });
  // A client killed mid-conversation resets its connection: expected in crash tests, not a failure of the sink.
  server.on('error', () => {});
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port));
  });
  const counts = () => {
    const byId = new Map<string, number>();
    for (const { messageId } of messages) byId.set(messageId, (byId.get(messageId) ?? 0) + 1);
    return byId;
  };
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    received: () => received,
    counts,
    duplicates: () => messages.length - counts().size,
    openTransactions: (ports) =>
      [...transactions.values()].filter(({ port }) => !ports || ports.includes(port)).length,
    unacknowledged: (ports) =>
      ports ? unacknowledged.filter((port) => ports.includes(port)).length : unacknowledged.length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
