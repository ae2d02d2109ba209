import { InvalidPayloadError, InvalidSignatureError } from '../../errors.ts';
import { assertSecrets, decodeJsonBody, headerValue } from '../../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import {
  keptHeaders,
  signatureHeader,
  sourceName,
  tokenMatches,
  withAction,
  type CatalogueProviderOptions,
} from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const GITLAB_FACTS: ProviderFacts = {
  scheme:
    'X-Gitlab-Token: the secret token itself, compared in constant time (nothing is signed; HTTPS is the only ' +
    'protection of the token and of the body)',
  eventKey:
    'Idempotency-Key (GitLab 17.4+, the same across retries and manual resends), else X-Gitlab-Event-UUID; ' +
    'refused as invalid_payload when both are absent',
  eventType:
    'the body\'s object_kind (event_name for system hooks), plus "." and object_attributes.action when present ' +
    '(merge_request.open)',
  toleranceSeconds: undefined,
  retries:
    'no automatic retries; a failing webhook is disabled temporarily, then permanently; resend by hand from ' +
    "the webhook's recent events",
  quirks:
    "the token travels in clear on every request; a webhook with GitLab's newer signing token sends Standard Webhooks headers instead (configure it as standard-webhooks)",
  requiredOptions: [],
  docs: 'https://docs.gitlab.com/user/project/integrations/webhooks/',
};

const KEPT = ['x-gitlab-event', 'x-gitlab-instance', 'x-gitlab-webhook-uuid', 'x-gitlab-event-uuid'];

/**
 * GitLab (project, group and system hooks): the `X-Gitlab-Token` header carries the configured secret token in
 * clear, so verifying is comparing it, in constant time, with each configured token. The body is not signed.
 * (A webhook with GitLab's newer signing token sends Standard Webhooks headers: configure it as a
 * `standard-webhooks` source instead.)
 *
 * Event key: `Idempotency-Key`, which retries keep, else `X-Gitlab-Event-UUID` (GitLab before 17.4). Type: the
 * body's `object_kind` (`event_name` for system hooks) and its `object_attributes.action`, e.g.
 * `merge_request.open`, `push`.
 *
 * @example
 * const gitlab = gitlabProvider({ secrets: [process.env.GITLAB_WEBHOOK_SECRET] });
 */
export function gitlabProvider(options: CatalogueProviderOptions): Provider {
  const name = sourceName('gitlab', options.name);
  assertSecrets(name, options.secrets);
  const secrets = [...options.secrets];

  return {
    name,
    verify(request: SignedRequest): VerifiedEvent {
      const token = signatureHeader(name, request, 'x-gitlab-token', 'GitLab');
      if (!tokenMatches(token, secrets)) {
        throw new InvalidSignatureError(
          `${name}: X-Gitlab-Token matched no configured token; is the secret configured for "${name}" ` +
            "the webhook's secret token?",
        );
      }
      const key =
        headerValue(request.header('idempotency-key')) ?? headerValue(request.header('x-gitlab-event-uuid'));
      if (key === undefined) {
        throw new InvalidPayloadError(
          `${name}: both Idempotency-Key and X-Gitlab-Event-UUID are absent; one is needed to deduplicate`,
        );
      }
      const { text, object } = decodeJsonBody(name, request.rawBody);
      const kind = object.object_kind ?? object.event_name;
      if (typeof kind !== 'string' || kind === '') {
        throw new InvalidPayloadError(`${name}: the body has neither "object_kind" nor "event_name"`);
      }
      const attributes = object.object_attributes;
      const action: unknown =
        typeof attributes === 'object' && attributes !== null
          ? (attributes as Record<string, unknown>).action
          : undefined;
      return {
        provider: name,
        eventId: key,
        type: withAction(kind, action),
        payloadText: text,
        headers: keptHeaders(request, KEPT),
        body: object,
      };
    },
  };
}

/** The headers GitLab sends with a delivery, for tests and the dev CLI: the token itself, and the event's key. */
export function signGitlab({
  secret,
  idempotencyKey,
}: {
  secret: string;
  idempotencyKey: string;
}): Record<string, string> {
  return { 'x-gitlab-token': secret, 'idempotency-key': idempotencyKey };
}

/** The catalogue's gitlab: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'gitlab',
  facts: GITLAB_FACTS,
  create: gitlabProvider,
  eventFacts: [
    { label: 'Project', paths: ['/project/path_with_namespace'] },
    { label: 'Project id', paths: ['/project/id', '/project_id'] },
    { label: 'User', paths: ['/user_username', '/user/username'], personal: true },
  ],
  subject: ['/project/path_with_namespace', '/user_username', '/user/username'],
  caseless: { subject: ['/project/path_with_namespace', '/user_username', '/user/username'], eventId: true },
  excerpt: [
    '/object_kind',
    '/event_name',
    '/project/id',
    '/project/path_with_namespace',
    '/object_attributes/id',
    '/object_attributes/iid',
    '/object_attributes/state',
    '/object_attributes/action',
    '/object_attributes/status',
    '/ref',
  ],
};
