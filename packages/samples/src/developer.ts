import { randomInt, randomUUID } from 'node:crypto';
import {
  signBitbucket,
  signGithub,
  signGitlab,
  signJira,
  signLinear,
  signSegment,
  signSentry,
  signVercel,
} from '@webhook-inbox/providers';
import { GITHUB_SAMPLE_BODIES, isGitHubSampleType } from './github.ts';
import { jsonDelivery, seconds, split, type DeliveryBuilder } from './shared.ts';

// Sample deliveries of the code hosts, issue trackers and developer platforms, in their documented shapes.
export const DEVELOPER_DELIVERIES: Record<string, DeliveryBuilder> = {
  github: {
    type: 'push',
    build(input) {
      const id = randomUUID();
      const [event, action] = split(input.type);
      // A type without a written body gets the fields every event carries; its own are missing.
      const sample = isGitHubSampleType(input.type)
        ? GITHUB_SAMPLE_BODIES[input.type]
        : {
            action,
            repository: GITHUB_SAMPLE_BODIES.push.repository,
            sender: GITHUB_SAMPLE_BODIES.push.sender,
          };
      return jsonDelivery(input, {
        sample,
        key: id,
        keyInHeader: true,
        headers: { 'x-github-event': event, 'x-github-delivery': id },
        sign: (payload) => ({ 'x-hub-signature-256': signGithub({ payload, secret: input.secret }) }),
      });
    },
  },
  gitlab: {
    type: 'push',
    build(input) {
      const id = randomUUID();
      const [kind, action] = split(input.type);
      return jsonDelivery(input, {
        sample: { object_kind: kind, object_attributes: action && { action }, project: { id: 15 } },
        key: id,
        keyInHeader: true,
        headers: { 'x-gitlab-event': 'Push Hook' },
        sign: () => signGitlab({ secret: input.secret, idempotencyKey: id }),
      });
    },
  },
  bitbucket: {
    type: 'repo:push',
    build(input) {
      const id = randomUUID();
      return jsonDelivery(input, {
        sample: { push: { changes: [] }, repository: { full_name: 'acme/app' } },
        key: id,
        keyInHeader: true,
        headers: { 'x-request-uuid': id, 'x-event-key': input.type },
        sign: (payload) => ({ 'x-hub-signature': signBitbucket({ payload, secret: input.secret }) }),
      });
    },
  },
  jira: {
    type: 'jira:issue_created',
    build(input) {
      const id = String(randomInt(1, 2 ** 47));
      return jsonDelivery(input, {
        sample: {
          timestamp: input.now.getTime(),
          webhookEvent: input.type,
          issue: { id: '10001', key: 'APP-1' },
        },
        key: id,
        keyInHeader: true,
        headers: { 'x-atlassian-webhook-identifier': id },
        sign: (payload) => ({ 'x-hub-signature': signJira({ payload, secret: input.secret }) }),
      });
    },
  },
  linear: {
    type: 'Issue.create',
    build(input) {
      const id = randomUUID();
      const [type, action] = split(input.type);
      return jsonDelivery(input, {
        sample: {
          action,
          type,
          data: { id: randomUUID(), title: 'Sample' },
          webhookTimestamp: input.now.getTime(),
        },
        key: id,
        keyInHeader: true,
        headers: { 'linear-delivery': id, 'linear-event': type },
        sign: (payload) => ({ 'linear-signature': signLinear({ payload, secret: input.secret }) }),
      });
    },
  },
  sentry: {
    type: 'issue.created',
    build(input) {
      const id = randomUUID();
      const [resource, action] = split(input.type);
      return jsonDelivery(input, {
        sample: { action, installation: { uuid: randomUUID() }, data: { issue: { id: '1117540176' } } },
        key: id,
        keyInHeader: true,
        headers: {
          'request-id': id,
          'sentry-hook-resource': resource,
          'sentry-hook-timestamp': String(seconds(input.now)),
        },
        sign: (payload) => ({ 'sentry-hook-signature': signSentry({ payload, secret: input.secret }) }),
      });
    },
  },
  vercel: {
    type: 'deployment.created',
    build(input) {
      const id = `evt_${randomUUID()}`;
      return jsonDelivery(input, {
        sample: {
          id,
          type: input.type,
          createdAt: input.now.getTime(),
          payload: { deployment: { id: 'dpl_1' } },
        },
        key: id,
        sign: (payload) => ({ 'x-vercel-signature': signVercel({ payload, secret: input.secret }) }),
      });
    },
  },
  segment: {
    type: 'track.Order Completed',
    build(input) {
      const id = `ajs-${randomUUID()}`;
      const [type, event] = split(input.type);
      return jsonDelivery(input, {
        sample: {
          messageId: id,
          type,
          event,
          userId: 'u_1',
          timestamp: input.now.toISOString(),
          properties: {},
        },
        key: id,
        sign: (payload) => ({ 'x-signature': signSegment({ payload, secret: input.secret }) }),
      });
    },
  },
};
