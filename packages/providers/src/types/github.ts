/**
 * GitHub's payload types for `inbox.on('github', ...)`, from `@octokit/openapi-webhooks-types` (GitHub's own
 * OpenAPI description of its webhooks, which `@octokit/webhooks` is typed by). An optional peer dependency: a
 * team that handles GitHub events installs it and imports this module once, which adds `github` to
 * `ProviderPayloads`; no other module of the package names it.
 *
 * @example
 * import type { GitHubInboxEvent } from '@webhook-inbox/providers/github';
 * createInbox().on('github', 'pull_request.opened', {
 *   label: async ({ event }) => event.payload.pull_request.number, // typed
 * });
 */
import type { operations } from '@octokit/openapi-webhooks-types';
import type { TypedInboxEvent } from '../payloads.ts';

/** `pull-request-review` → `pull_request_review`: the spec's operation names spell GitHub's `_` as `-`. */
type Underscored<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}_${Underscored<Tail>}`
  : S;

/**
 * The receiver's type for a spec operation: `X-GitHub-Event`, then `.` and the body's `action` when the event
 * has actions (`pull-request/opened` → `pull_request.opened`, `push` → `push`).
 */
type TypeOf<Operation extends string> = Operation extends `${infer Event}/${infer Action}`
  ? `${Underscored<Event>}.${Underscored<Action>}`
  : Underscored<Operation>;

type BodyOf<Operation extends keyof operations> = operations[Operation] extends {
  requestBody: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** Every GitHub event type the receiver records, to its payload. */
export type GitHubPayloads = {
  [Operation in Extract<keyof operations, string> as TypeOf<Operation>]: BodyOf<Operation>;
};

/** A GitHub event type as the receiver records it: `pull_request.opened`, `push`, `ping`, ... */
export type GitHubEventType = Extract<keyof GitHubPayloads, string>;

/** A GitHub event, its payload typed by its type; for a union of types, a union `event.type` narrows. */
export type GitHubInboxEvent<T extends GitHubEventType = GitHubEventType> = TypedInboxEvent<'github', T>;

declare module '../payloads.ts' {
  interface ProviderPayloads {
    github: GitHubPayloads;
  }
}
