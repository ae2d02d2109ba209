import { describe, expect, expectTypeOf, it } from 'vitest';
import { githubProvider } from '@webhook-inbox/providers';
import type { GitHubPayloads } from '@webhook-inbox/providers/github';
import { catalogueDelivery, GITHUB_SAMPLE_BODIES, type GitHubSampleType, type Shape } from '../src/index.ts';
import type { RequiredKeys } from './support.ts';

// `webhook-inbox send github <type>` posts these bodies to a team whose effects read them as
// `GitHubInboxEvent<type>`: each must be that type's payload. The type-check (pnpm typecheck covers this file)
// holds every field a sample carries to the type package's type, and every top-level field the type requires to
// be present; the tests below run each sample through the receiver's verification and read it as the guide's
// effects do.

type Samples = typeof GITHUB_SAMPLE_BODIES;

// Each sample is assignable to its type's payload, field by field...
const typed: { [T in GitHubSampleType]: Shape<GitHubPayloads[T]> } = GITHUB_SAMPLE_BODIES;
void typed;
// ... and misses none of its top-level fields (for a union of shapes, those of one of them).
type Missing<T extends GitHubSampleType> = GitHubPayloads[T] extends infer Payload
  ? Payload extends unknown
    ? Exclude<RequiredKeys<Payload>, keyof Samples[T]>
    : never
  : never;
type MissingAny = { [T in GitHubSampleType]: [Missing<T>] extends [never] ? never : T }[GitHubSampleType];

const SECRET = 'gh-sample-secret';
const github = githubProvider({ secrets: [SECRET] });

describe('GitHub samples', () => {
  it('carry every top-level field their type requires', () => {
    expectTypeOf<MissingAny>().toEqualTypeOf<never>();
  });

  it.each(Object.keys(GITHUB_SAMPLE_BODIES) as GitHubSampleType[])(
    '%s: signed, verified and recorded as its type, with its body',
    (type) => {
      const delivery = catalogueDelivery('github', { secret: SECRET, type })!;
      const event = github.verify(
        {
          rawBody: new TextEncoder().encode(delivery.body),
          header: (name) => delivery.headers[name.toLowerCase()] ?? null,
        },
        new Date(),
      );
      expect(event.type).toBe(type);
      expect(event.eventId).toBe(delivery.key);
      const payload = JSON.parse(delivery.body) as Record<string, unknown>;
      expect(payload).toEqual(JSON.parse(JSON.stringify(GITHUB_SAMPLE_BODIES[type])));
      const [, action] = type.split('.');
      expect(payload['action']).toBe(action);
    },
  );

  it('read as the guide’s effects read them', () => {
    const opened = GITHUB_SAMPLE_BODIES['pull_request.opened'];
    expect(`pr:${opened.repository.full_name}#${opened.pull_request.number}`).toBe('pr:acme/app#7');
    expect(opened.pull_request.draft).toBe(false);
    expect(opened.number).toBe(opened.pull_request.number);
    const push = GITHUB_SAMPLE_BODIES.push;
    expect(push.commits.length).toBe(1);
    expect(push.head_commit.id).toBe(push.after);
  });
});
