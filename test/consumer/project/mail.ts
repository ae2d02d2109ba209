/** The team's own mail client that the inbox README's example (example.ts) sends its welcome email with. */
export interface Message {
  to: string;
  subject: string;
  text: string;
  messageId: string;
}

export const mailer = {
  send(message: Message): Promise<void> {
    console.log(`mail to ${message.to}: ${message.subject}`);
    return Promise.resolve();
  },
};
