// GitHub's sample bodies, one per event type, in the shape of `@octokit/openapi-webhooks-types` (what
// `@webhook-inbox/providers/github` types `event.payload` by): a `pull_request.opened` carries its `pull_request`,
// a `push` its `commits`. Every top-level field the type requires is here, each object in its documented form;
// `test/samples/github.test.ts` type-checks them against the type package and runs them through the receiver's
// verification. `webhook-inbox send github <type>` posts them.

const OWNER = {
  login: 'acme',
  id: 9919,
  node_id: 'MDEyOk9yZ2FuaXphdGlvbjk5MTk=',
  type: 'Organization' as const,
  site_admin: false,
  html_url: 'https://github.com/acme',
  url: 'https://api.github.com/users/acme',
  avatar_url: 'https://avatars.githubusercontent.com/u/9919?v=4',
};

const SENDER = {
  login: 'octocat',
  id: 583231,
  node_id: 'MDQ6VXNlcjU4MzIzMQ==',
  type: 'User' as const,
  site_admin: false,
  html_url: 'https://github.com/octocat',
  url: 'https://api.github.com/users/octocat',
  avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4',
};

const REPOSITORY = {
  id: 1296269,
  node_id: 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5',
  name: 'app',
  full_name: 'acme/app',
  private: false,
  owner: OWNER,
  html_url: 'https://github.com/acme/app',
  url: 'https://api.github.com/repos/acme/app',
  default_branch: 'main',
  fork: false,
  archived: false,
};

function pullRequest(number: number, state: 'open' | 'closed', merged: boolean) {
  return {
    id: 1_000_000 + number,
    node_id: `PR_kwDOABCD${number}`,
    number,
    state,
    title: 'Add a thing',
    body: 'What it does and why.',
    draft: false,
    locked: false,
    merged,
    merged_at: merged ? '2026-12-05T10:00:00Z' : null,
    closed_at: state === 'closed' ? '2026-12-05T10:00:00Z' : null,
    created_at: '2026-12-05T09:00:00Z',
    updated_at: '2026-12-05T09:30:00Z',
    html_url: `https://github.com/acme/app/pull/${number}`,
    url: `https://api.github.com/repos/acme/app/pulls/${number}`,
    user: SENDER,
    head: { label: 'octocat:a-thing', ref: 'a-thing', sha: 'a10867b14bb761a232cd80139fbd4c0d33264240' },
    base: { label: 'acme:main', ref: 'main', sha: '9049f1265b7d61be4a8904a9a27120d2064dab3b' },
  };
}

function issue(number: number, state: 'open' | 'closed') {
  return {
    id: 2_000_000 + number,
    node_id: `I_kwDOABCD${number}`,
    number,
    state,
    title: 'Something is broken',
    body: 'Steps to reproduce.',
    locked: false,
    comments: 0,
    labels: [],
    created_at: '2026-12-05T09:00:00Z',
    updated_at: '2026-12-05T09:30:00Z',
    closed_at: state === 'closed' ? '2026-12-05T10:00:00Z' : null,
    html_url: `https://github.com/acme/app/issues/${number}`,
    url: `https://api.github.com/repos/acme/app/issues/${number}`,
    user: SENDER,
  };
}

const COMMIT = {
  id: 'a10867b14bb761a232cd80139fbd4c0d33264240',
  tree_id: 'f9d2a07e9488b91af2641b26b9407fe22a451433',
  distinct: true,
  message: 'Add a thing',
  timestamp: '2026-12-05T09:00:00Z',
  url: 'https://github.com/acme/app/commit/a10867b14bb761a232cd80139fbd4c0d33264240',
  author: { name: 'Octo Cat', email: 'octocat@example.com', username: 'octocat' },
  committer: { name: 'Octo Cat', email: 'octocat@example.com', username: 'octocat' },
  added: ['thing.ts'],
  removed: [],
  modified: ['README.md'],
};

/** The sample body of each GitHub event type `send` knows, by the type the receiver records. */
export const GITHUB_SAMPLE_BODIES = {
  ping: {
    zen: 'Keep it logically awesome.',
    hook_id: 292430182,
    hook: { id: 292430182, type: 'Repository', active: true, events: ['*'], config: {} },
    repository: REPOSITORY,
    sender: SENDER,
  },
  push: {
    ref: 'refs/heads/main',
    before: '9049f1265b7d61be4a8904a9a27120d2064dab3b',
    after: COMMIT.id,
    base_ref: null,
    created: false,
    deleted: false,
    forced: false,
    compare: 'https://github.com/acme/app/compare/9049f1265b7d...a10867b14bb7',
    commits: [COMMIT],
    head_commit: COMMIT,
    pusher: { name: 'octocat', email: 'octocat@example.com' },
    repository: REPOSITORY,
    sender: SENDER,
  },
  'pull_request.opened': {
    action: 'opened',
    number: 7,
    pull_request: pullRequest(7, 'open', false),
    repository: REPOSITORY,
    sender: SENDER,
  },
  'pull_request.reopened': {
    action: 'reopened',
    number: 7,
    pull_request: pullRequest(7, 'open', false),
    repository: REPOSITORY,
    sender: SENDER,
  },
  'pull_request.synchronize': {
    action: 'synchronize',
    number: 7,
    before: '9049f1265b7d61be4a8904a9a27120d2064dab3b',
    after: COMMIT.id,
    pull_request: pullRequest(7, 'open', false),
    repository: REPOSITORY,
    sender: SENDER,
  },
  'pull_request.closed': {
    action: 'closed',
    number: 7,
    pull_request: pullRequest(7, 'closed', true),
    repository: REPOSITORY,
    sender: SENDER,
  },
  'issues.opened': {
    action: 'opened',
    issue: issue(12, 'open'),
    repository: REPOSITORY,
    sender: SENDER,
  },
  'issues.closed': {
    action: 'closed',
    issue: issue(12, 'closed'),
    repository: REPOSITORY,
    sender: SENDER,
  },
  'issue_comment.created': {
    action: 'created',
    issue: issue(12, 'open'),
    comment: {
      id: 3_000_001,
      node_id: 'IC_kwDOABCD1',
      body: 'Thanks, looking at it.',
      created_at: '2026-12-05T09:40:00Z',
      updated_at: '2026-12-05T09:40:00Z',
      html_url: 'https://github.com/acme/app/issues/12#issuecomment-3000001',
      url: 'https://api.github.com/repos/acme/app/issues/comments/3000001',
      user: SENDER,
    },
    repository: REPOSITORY,
    sender: SENDER,
  },
} as const;

/** A GitHub event type with a sample body. */
export type GitHubSampleType = keyof typeof GITHUB_SAMPLE_BODIES;

export function isGitHubSampleType(type: string): type is GitHubSampleType {
  return Object.hasOwn(GITHUB_SAMPLE_BODIES, type);
}
