import { errorLine } from '@webhook-inbox/inbox/error-text';
import { maskString } from '../redact.ts';
import { shellArg } from '../shell.ts';
import { consoleLinks } from './links.ts';
import {
  isDestinationAlert,
  isEventAlert,
  type Alert,
  type AlertKind,
  type DestinationAlert,
} from './model.ts';

/** A Slack-compatible incoming-webhook body (also understood by Mattermost, Rocket.Chat, Discord `/slack`). */
export interface AlertMessage {
  text: string;
  blocks?: unknown[];
}

/** A repeat count attached to a summary message. */
export interface Repeats {
  /** Occurrences in the window just closed (not counting the one already sent). */
  more: number;
  /** Occurrences since the group opened, the first included. */
  total: number;
  windowMs: number;
  since: Date;
}

const MAX_ERROR_LENGTH = 500;
const TITLES: Record<AlertKind, string> = {
  event_dead: 'Event dead',
  effect_failed: 'Effect failed its last retry',
  signature_failures: 'Refused signatures above threshold',
  destination_open: "Destination's circuit open",
  destination_paused: 'Destination paused',
  destination_failure_rate: 'Destination failing',
};

/** What an operator reads under a destination's alert: what its deliveries do meanwhile, how it ends. */
const DESTINATION_HINTS: Record<DestinationAlert['kind'], (name: string) => string> = {
  destination_open: () =>
    'Its deliveries wait, without using attempts, until the next probe; a probe answered 2xx closes the circuit.',
  destination_paused: (name) =>
    `Its deliveries wait until an operator resumes it: the console's destination page, or npx webhook-inbox destinations resume ${shellArg(name)}`,
  destination_failure_rate: () =>
    'Failed deliveries are retried on its schedule; after the last attempt a delivery waits for a replay.',
};

/** The exact command that re-runs the event's unfinished effects (of one consumer group, when given). */
export function replayCommand(provider: string, eventId: string, group?: string): string {
  const command = `npx webhook-inbox replay ${shellArg(provider)} ${shellArg(eventId)}`;
  return group === undefined ? command : `${command} --group ${shellArg(group)}`;
}

function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function codeBlock(text: string): string {
  return `\`\`\`${escapeMrkdwn(text.replace(/```/g, "'''"))}\`\`\``;
}

function formatWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Renders one alert (or a group summary) as a Slack message. `text` carries every field on its own (it is what
 * notifications and non-Slack receivers show); `blocks` lays the same out for Slack. The alert's payload is never
 * read here: the caller passes the excerpt it made once (`alertExcerpt`).
 */
export function formatAlert(
  alert: Alert,
  options: {
    service?: string;
    /** The payload excerpt (`alertExcerpt`), shown as it is. */
    excerpt?: string | undefined;
    repeats?: Repeats | undefined;
    dropped?: number;
    /** The console's address (`CONSOLE_PUBLIC_URL`): links to the event and its failure group. */
    consoleUrl?: string | undefined;
  } = {},
): AlertMessage & { plain: string } {
  const service = options.service ?? 'webhook-inbox';
  const { repeats, excerpt } = options;
  const lines: string[] = [];
  const fields: Array<[string, string]> = [];
  let error: string | undefined;
  let command: string | undefined;
  let subject: string;

  if (alert.kind === 'signature_failures') {
    const window = formatWindow(alert.windowMs);
    subject = alert.complete
      ? `${alert.provider}: ${alert.count} refused signatures in ${window} (threshold ${alert.threshold})`
      : `${alert.provider}: ${alert.count} refused signatures so far within ${window} (threshold ${alert.threshold})`;
    fields.push(
      ['Provider', alert.provider],
      ['Refused', `${alert.count}${alert.complete ? '' : ' so far'}`],
      ['Since', alert.since.toISOString()],
    );
    if (!alert.complete)
      lines.push(`If more are refused, their total follows when the ${window} window ends.`);
    lines.push(
      `Check the webhook secret configured for ${alert.provider}: a rotated secret not yet deployed, or a new endpoint secret, refuses every delivery.`,
    );
  } else if (isDestinationAlert(alert)) {
    const cause = bounded(maskString(alert.cause), MAX_ERROR_LENGTH);
    subject = `${alert.destination} in group ${alert.group}: ${cause}`;
    fields.push(['Destination', alert.destination], ['Consumer group', alert.group], ['Cause', cause]);
    lines.push(DESTINATION_HINTS[alert.kind](alert.destination));
  } else {
    subject = `${alert.provider} ${alert.type} ${alert.eventId}${alert.effect ? ` (${alert.effect})` : ''}`;
    if (alert.group !== undefined) subject += ` in group ${alert.group}`;
    fields.push(['Provider', alert.provider], ['Event key', alert.eventId], ['Type', alert.type]);
    if (alert.group !== undefined) fields.push(['Consumer group', alert.group]);
    if (alert.effect) fields.push(['Effect', alert.effect]);
    if (alert.attempts !== undefined) fields.push(['Attempts', String(alert.attempts)]);
    error = bounded(maskString(errorLine(alert.error)), MAX_ERROR_LENGTH);
    command = replayCommand(alert.provider, alert.eventId, alert.group);
  }

  const links = options.consoleUrl === undefined ? [] : consoleLinks(alert, options.consoleUrl);

  let title = `[${service}] ${TITLES[alert.kind]}: ${subject}`;
  let repeatLine: string | undefined;
  if (repeats) {
    title = `[${service}] ${TITLES[alert.kind]}: … and ${repeats.more} more like this`;
    repeatLine =
      `… and ${repeats.more} more like this in ${formatWindow(repeats.windowMs)} ` +
      `(${repeats.total} in total since ${repeats.since.toISOString()}). Latest: ${subject}`;
  }

  const text = [
    title,
    ...(repeatLine ? [repeatLine] : []),
    ...fields.map(([name, value]) => `${name.toLowerCase()}: ${value}`),
    ...(error !== undefined ? [`error: ${error}`] : []),
    ...(command ? [`replay: ${command}`] : []),
    ...links.map(({ label, url }) => `${label.toLowerCase()}: ${url}`),
    ...(repeats && isEventAlert(alert)
      ? [
          // Both kinds are raised when an event's job ran out of retries: the events are dead, not failed.
          `list: npx webhook-inbox events --provider ${shellArg(alert.provider)} --status dead --since 1h`,
        ]
      : []),
    ...lines,
    ...(excerpt !== undefined ? [`payload excerpt: ${excerpt}`] : []),
    ...(options.dropped
      ? [`(${options.dropped} alerts dropped since the last one delivered: alert queue full)`]
      : []),
  ].join('\n');

  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: bounded(title, 150), emoji: false } },
  ];
  if (repeatLine) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(repeatLine) } });
  blocks.push({
    type: 'section',
    fields: fields.map(([name, value]) => ({ type: 'mrkdwn', text: `*${name}*\n${escapeMrkdwn(value)}` })),
  });
  if (error !== undefined)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*Error*\n${codeBlock(error)}` } });
  if (command) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*Replay*\n${codeBlock(command)}` } });
  }
  if (links.length > 0) {
    const text = links.map(({ label, url }) => `<${url}|${escapeMrkdwn(label)}>`).join('  ·  ');
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
  }
  for (const line of lines)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(line) } });
  if (excerpt !== undefined) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*Payload excerpt*\n${codeBlock(excerpt)}` },
    });
  }
  if (options.dropped) {
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `${options.dropped} alerts dropped since the last one delivered: alert queue full`,
        },
      ],
    });
  }
  return { text: escapeMrkdwn(text), blocks, plain: text };
}
