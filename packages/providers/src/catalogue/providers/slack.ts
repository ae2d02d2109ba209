import { createHash } from 'node:crypto';
import { challengeText } from '../../handshakes.ts';
import { decodeJsonBody, unixSeconds } from '../../shared.ts';
import { decodeForm } from '../../template-body.ts';
import type { Provider, Reception, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { handshakingProvider } from '../handshaking.ts';
import {
  bodyObject,
  bodyString,
  hmacSource,
  keptHeaders,
  type CatalogueProviderOptions,
} from '../signing.ts';
import { checkV0Signature, signV0 } from '../v0-hmac.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const SLACK_FACTS: ProviderFacts = {
  scheme:
    'X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<raw body>">, keyed with the ' +
    "app's signing secret (Basic Information > App Credentials)",
  eventKey:
    "Events API: the envelope's event_id (kept by retries); interactivity and slash commands: trigger_id, else " +
    'a hash of the raw body (Slack never redelivers those); refused as invalid_payload when an event has none',
  eventType:
    'Events API: the inner event.type (app_mention, message, ...); interactivity: the payload type ' +
    '(block_actions, view_submission, shortcut, ...); slash commands: slash_command:/<command>',
  toleranceSeconds: 300,
  retries:
    'Events API: 3 retries, nearly immediately, after 1 minute and after 5 minutes (X-Slack-Retry-Num, ' +
    'X-Slack-Retry-Reason); an answer slower than 3 seconds counts as a failure; interactivity and slash ' +
    'commands are not retried',
  quirks:
    'url_verification (signed) is answered with its challenge as text and not recorded; interactivity is ' +
    'form-encoded with the JSON in payload=, slash commands are plain form fields (stored as {"form","raw"}); ' +
    'every answer is an empty 200, since a slash command or view_submission would show a JSON body to the user',
  requiredOptions: [],
  docs: 'https://api.slack.com/authentication/verifying-requests-from-slack',
};

/** The answer to every recorded request: empty, which Slack reads as "acknowledged, nothing to show". */
const ACKNOWLEDGED = { status: 200, contentType: 'text/plain; charset=utf-8', body: '' } as const;
const KEPT = ['x-slack-retry-num', 'x-slack-retry-reason'];

const HEADERS = { signature: 'x-slack-signature', timestamp: 'x-slack-request-timestamp', sender: 'Slack' };

/**
 * Slack (Events API, interactivity, slash commands): `X-Slack-Signature: v0=<hex>` is the HMAC-SHA256 of
 * `v0:<X-Slack-Request-Timestamp>:<raw body>` keyed with the signing secret; the timestamp must be within 5
 * minutes. A JSON body is an Events API envelope: `url_verification` is answered with its challenge, an
 * `event_callback` is keyed by `event_id` and typed by `event.type`. A form body with `payload=` is an
 * interaction (typed by its `type`), one with `command=` a slash command; both are keyed by `trigger_id`.
 */
export function slackProvider(options: CatalogueProviderOptions): Provider {
  const { name, keys, toleranceSeconds } = hmacSource('slack', options, SLACK_FACTS.toleranceSeconds ?? 300);

  const authenticate = (request: SignedRequest, now: Date) =>
    checkV0Signature(name, request, now, keys, toleranceSeconds, HEADERS);

  const receive = (request: SignedRequest, now: Date): Reception => {
    authenticate(request, now);
    const headers = keptHeaders(request, KEPT);
    if (request.rawBody[0] === 0x7b /* { */) {
      const { text, object } = decodeJsonBody(name, request.rawBody);
      if (object.type === 'url_verification') return challengeAnswer(name, object.challenge);
      return { kind: 'events', events: [{ ...envelopeEvent(name, object), payloadText: text, headers }] };
    }
    return { kind: 'events', events: [{ ...formEvent(name, request.rawBody), headers }] };
  };

  return handshakingProvider(name, receive, { response: ACKNOWLEDGED });
}

function challengeAnswer(name: string, challenge: unknown): Reception {
  return {
    kind: 'handshake',
    handshake: 'slack',
    answer: {
      status: 200,
      contentType: 'text/plain; charset=utf-8',
      body: challengeText(name, challenge, 'url_verification challenge'),
    },
  };
}

/** An Events API envelope: `event_callback` by its inner event's type; `app_rate_limited` by its minute. */
function envelopeEvent(
  name: string,
  object: Record<string, unknown>,
): Omit<VerifiedEvent, 'payloadText' | 'headers'> {
  if (object.type === 'app_rate_limited') {
    const minute = bodyString(name, object, 'minute_rate_limited');
    return {
      provider: name,
      eventId: `app_rate_limited:${bodyString(name, object, 'team_id')}:${minute}`,
      type: 'app_rate_limited',
    };
  }
  const event = bodyObject(name, object, 'event');
  return {
    provider: name,
    eventId: bodyString(name, object, 'event_id'),
    type: bodyString(name, event, 'type'),
  };
}

/** An interaction (`payload=` JSON) or a slash command (`command=`), stored as `{"form","raw"}`. */
function formEvent(name: string, rawBody: Uint8Array): Omit<VerifiedEvent, 'headers'> {
  const { value, payloadText } = decodeForm(name, rawBody, ['payload']);
  const fields = value as Record<string, unknown>;
  const interaction = fields.payload;
  const [object, type] =
    typeof interaction === 'object' && interaction !== null && !Array.isArray(interaction)
      ? [
          interaction as Record<string, unknown>,
          bodyString(name, interaction as Record<string, unknown>, 'type'),
        ]
      : [fields, `slash_command:${bodyString(name, fields, 'command')}`];
  const trigger = object.trigger_id;
  const eventId =
    typeof trigger === 'string' && trigger !== ''
      ? trigger
      : `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
  return { provider: name, eventId, type, payloadText };
}

export interface SignSlackOptions {
  /** The exact body that will be sent (JSON, or a form). */
  payload: string | Uint8Array;
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/** The `X-Slack-Signature` and `X-Slack-Request-Timestamp` headers Slack would send (tests and the dev CLI). */
export function signSlack({
  payload,
  secret,
  timestamp = unixSeconds(),
}: SignSlackOptions): Record<string, string> {
  return signV0(HEADERS, payload, secret, timestamp);
}

/** The catalogue's slack: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'slack',
  facts: SLACK_FACTS,
  create: slackProvider,
  eventFacts: [
    { label: 'Workspace', paths: ['/team_id', '/form/payload/team/id', '/form/team_id'] },
    { label: 'Workspace domain', paths: ['/form/payload/team/domain', '/form/team_domain'] },
    { label: 'Enterprise', paths: ['/enterprise_id', '/form/payload/enterprise/id'] },
    { label: 'App', paths: ['/api_app_id', '/form/payload/api_app_id', '/form/api_app_id'] },
    { label: 'Channel', paths: ['/event/channel', '/form/payload/channel/id'] },
    { label: 'User', paths: ['/event/user', '/form/payload/user/id'], personal: true },
  ],
  excerpt: [
    '/type',
    '/event_id',
    '/event_time',
    '/team_id',
    '/enterprise_id',
    '/api_app_id',
    '/event/type',
    '/event/subtype',
    '/event/channel',
    '/event/event_ts',
    '/form/payload/type',
    '/form/payload/team/id',
    '/form/payload/team/domain',
    '/form/payload/channel/id',
    '/form/payload/api_app_id',
  ],
};
