import type { SlackPayloads } from '@webhook-inbox/providers/slack';
import type { SampleBodies, Shape } from './shape.ts';

// Slack's sample bodies, one per event type, in the shape of `@slack/types` (what `@webhook-inbox/providers/slack`
// types `event.payload` by): the Events API's `event_callback` envelope around the event. `satisfies` holds each
// to its type; the builder (messaging.ts) gives each delivery a fresh `event_id` and `event_time`.
// `webhook-inbox send slack <type>` posts them.

const ENVELOPE = {
  token: 'verification-token-unused',
  team_id: 'T061EG9R6',
  api_app_id: 'A0PNCHHK2',
  type: 'event_callback',
  event_id: 'Ev0PV52K21',
  event_time: 1_733_390_000,
  authorizations: [{ enterprise_id: null, team_id: 'T061EG9R6', user_id: 'U0LAN0Z89', is_bot: true }],
} as const satisfies Shape<SlackPayloads['app_mention']>;

/** The sample body of each Slack event type `send` knows, by the type the receiver records. */
export const SLACK_SAMPLE_BODIES = {
  app_mention: {
    ...ENVELOPE,
    event: {
      type: 'app_mention',
      user: 'U061F7AUR',
      text: '<@U0LAN0Z89> hello',
      ts: '1515449522.000016',
      channel: 'C0LAN2Q65',
      event_ts: '1515449522000016',
    },
  },
  message: {
    ...ENVELOPE,
    event: {
      type: 'message',
      channel: 'C0LAN2Q65',
      channel_type: 'channel',
      user: 'U061F7AUR',
      text: 'Is the deploy done?',
      ts: '1515449530.000017',
      event_ts: '1515449530.000017',
    },
  },
  reaction_added: {
    ...ENVELOPE,
    event: {
      type: 'reaction_added',
      user: 'U061F7AUR',
      reaction: 'white_check_mark',
      item_user: 'U0LAN0Z89',
      item: { type: 'message', channel: 'C0LAN2Q65', ts: '1515449530.000017' },
      event_ts: '1515449540.000018',
    },
  },
} satisfies SampleBodies<SlackPayloads, 'app_mention' | 'message' | 'reaction_added'>;

/** A Slack event type with a sample body. */
export type SlackSampleType = keyof typeof SLACK_SAMPLE_BODIES;

export function isSlackSampleType(type: string): type is SlackSampleType {
  return Object.hasOwn(SLACK_SAMPLE_BODIES, type);
}
