/**
 * Slack's payload types for `inbox.on('slack', ...)`, from `@slack/types` (the Node Slack SDK's shared types,
 * which `@slack/bolt` re-exports). An optional peer dependency: a team that handles Slack events installs it and
 * imports this module once, which adds `slack` to `ProviderPayloads`; no other module of the package names it.
 *
 * An Events API delivery's type is its inner `event.type` (`app_mention`, `message`, `reaction_added`), and the
 * payload is the `event_callback` envelope around it. Interactivity (`block_actions`, `view_submission`, ...)
 * arrives form-encoded with shapes `@slack/types` does not describe: those types are accepted, their payload
 * stays `unknown` (parse it with `parsePayload`).
 *
 * @example
 * import type { SlackInboxEvent } from '@webhook-inbox/providers/slack';
 * createInbox().on('slack', 'app_mention', {
 *   reply: external({ run: async ({ event }) => say(event.payload.event.channel, event.payload.event.text) }),
 * });
 */
import type { SlackEvent } from '@slack/types';
import type { TypedInboxEvent } from '../payloads.ts';

/** One authorization an `event_callback` carries: a workspace (or org) the app is installed in. */
export interface SlackAuthorization {
  enterprise_id: string | null;
  team_id: string | null;
  user_id: string;
  is_bot: boolean;
  is_enterprise_install?: boolean;
}

/** The Events API envelope Slack POSTs: one event, the workspace and app it is for, and its key (`event_id`). */
export interface SlackEventCallback<Event extends SlackEvent = SlackEvent> {
  type: 'event_callback';
  token: string;
  team_id: string;
  enterprise_id?: string;
  api_app_id: string;
  event: Event;
  event_id: string;
  event_time: number;
  authorizations?: SlackAuthorization[];
  is_ext_shared_channel?: boolean;
  event_context?: string;
  context_team_id?: string | null;
  context_enterprise_id?: string | null;
}

/** Interactivity payload types: accepted by `on('slack', ...)`, with an `unknown` payload. */
export type SlackInteractionType =
  'block_actions' | 'block_suggestion' | 'view_submission' | 'view_closed' | 'shortcut' | 'message_action';

/** Every Slack event type, to its payload. */
export type SlackPayloads = {
  [Type in SlackEvent['type']]: SlackEventCallback<Extract<SlackEvent, { type: Type }>>;
} & { [Type in SlackInteractionType]: unknown };

export type SlackEventType = Extract<keyof SlackPayloads, string>;

/** A Slack event, its payload typed by its type; for a union of types, a union `event.type` narrows. */
export type SlackInboxEvent<T extends SlackEventType = SlackEventType> = TypedInboxEvent<'slack', T>;

declare module '../payloads.ts' {
  interface ProviderPayloads {
    slack: SlackPayloads;
  }
}
