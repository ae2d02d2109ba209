// A team's Slack, GitHub, Paddle and Square effects under the README's strict tsconfig, with `@slack/types`,
// `@octokit/openapi-webhooks-types`, `@paddle/paddle-node-sdk` and `square` installed as the README's typed payloads
// section says. The `@ts-expect-error`
// lines fail the type-check when what they expect (a refused type name, a field the payload lacks) compiles.
import { createInbox, external, type DatabaseEffectFn } from '@webhook-inbox/inbox';
import type { GitHubInboxEvent } from '@webhook-inbox/providers/github';
import type { PaddleInboxEvent } from '@webhook-inbox/providers/paddle';
import type { SlackInboxEvent } from '@webhook-inbox/providers/slack';
import type { SquareInboxEvent } from '@webhook-inbox/providers/square';

const acknowledge = external<SlackInboxEvent<'app_mention'>>({
  scope: (event) => `${event.payload.team_id}:${event.payload.event.ts}`,
  run: ({ event, log }) => {
    const { team_id: team, event: mention } = event.payload;
    const text: string = mention.text;
    log.info({ team, channel: mention.channel, length: text.length }, 'mentioned');
    // @ts-expect-error an app_mention carries no reaction
    log.info({ reaction: mention.reaction });
  },
});

const countReactions: DatabaseEffectFn<SlackInboxEvent<'reaction_added' | 'reaction_removed'>> = ({
  event,
}) => {
  const reaction: string = event.payload.event.reaction;
  if (event.type === 'reaction_added') void reaction;
};

const closed: DatabaseEffectFn<GitHubInboxEvent<'pull_request.closed'>> = ({ event }) => {
  const merged: boolean | null = event.payload.pull_request.merged;
  void merged;
};

const fulfil: DatabaseEffectFn<PaddleInboxEvent<'transaction.completed'>> = ({ event }) => {
  const customer: string | null | undefined = event.payload.data.customer_id;
  void customer;
};

const settle: DatabaseEffectFn<SquareInboxEvent<'payment.updated'>> = ({ event }) => {
  const payment: string | null | undefined = event.payload.data?.object?.payment?.id;
  void payment;
};

export const teamInbox = createInbox()
  .on('slack', 'app_mention', { acknowledge })
  .on('slack', ['reaction_added', 'reaction_removed'], { countReactions })
  .on('github', 'pull_request.closed', { closed })
  .on('paddle', 'transaction.completed', { fulfil })
  .on('square', 'payment.updated', { settle });

// @ts-expect-error a misspelt GitHub event type
createInbox().on('github', 'pull_request.opend', { typo: () => undefined });
// @ts-expect-error a misspelt Slack event type
createInbox().on('slack', 'app_mentioned', { typo: () => undefined });
// @ts-expect-error a misspelt Square event type
createInbox().on('square', 'payment.update', { typo: () => undefined });
