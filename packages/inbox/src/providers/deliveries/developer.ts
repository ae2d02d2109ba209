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
} from '../catalogue/index.ts';
import { bodyOf, JSON_TYPE, seconds, split, type DeliveryBuilder } from './shared.ts';

// Sample deliveries of the code hosts, issue trackers and developer platforms, in their documented shapes.
export const DEVELOPER_DELIVERIES: Record<string, DeliveryBuilder> = {
  github: {
    type: 'push',
    build(input) {
      const id = randomUUID();
      const [event, action] = split(input.type);
      const sample = { action, ref: 'refs/heads/main', repository: { full_name: 'acme/app' } };
      const { body } = bodyOf(input, sample, id);
      const headers = { ...JSON_TYPE, 'x-github-event': event, 'x-github-delivery': id };
      return {
        body,
        key: id,
        type: input.type,
        headers: { ...headers, 'x-hub-signature-256': signGithub({ payload: body, secret: input.secret }) },
      };
    },
  },
  gitlab: {
    type: 'push',
    build(input) {
      const id = randomUUID();
      const [kind, action] = split(input.type);
      const sample = { object_kind: kind, object_attributes: action && { action }, project: { id: 15 } };
      const { body } = bodyOf(input, sample, id);
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'x-gitlab-event': 'Push Hook',
          ...signGitlab({ secret: input.secret, idempotencyKey: id }),
        },
      };
    },
  },
  bitbucket: {
    type: 'repo:push',
    build(input) {
      const id = randomUUID();
      const { body } = bodyOf(input, { push: { changes: [] }, repository: { full_name: 'acme/app' } }, id);
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'x-request-uuid': id,
          'x-event-key': input.type,
          'x-hub-signature': signBitbucket({ payload: body, secret: input.secret }),
        },
      };
    },
  },
  jira: {
    type: 'jira:issue_created',
    build(input) {
      const id = String(randomInt(1, 2 ** 47));
      const { body } = bodyOf(
        input,
        { timestamp: input.now.getTime(), webhookEvent: input.type, issue: { id: '10001', key: 'APP-1' } },
        id,
      );
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'x-atlassian-webhook-identifier': id,
          'x-hub-signature': signJira({ payload: body, secret: input.secret }),
        },
      };
    },
  },
  linear: {
    type: 'Issue.create',
    build(input) {
      const id = randomUUID();
      const [type, action] = split(input.type);
      const sample = {
        action,
        type,
        data: { id: randomUUID(), title: 'Sample' },
        webhookTimestamp: input.now.getTime(),
      };
      const { body } = bodyOf(input, sample, id);
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'linear-delivery': id,
          'linear-event': type,
          'linear-signature': signLinear({ payload: body, secret: input.secret }),
        },
      };
    },
  },
  sentry: {
    type: 'issue.created',
    build(input) {
      const id = randomUUID();
      const [resource, action] = split(input.type);
      const { body } = bodyOf(
        input,
        { action, installation: { uuid: randomUUID() }, data: { issue: { id: '1117540176' } } },
        id,
      );
      return {
        body,
        key: id,
        type: input.type,
        headers: {
          ...JSON_TYPE,
          'request-id': id,
          'sentry-hook-resource': resource,
          'sentry-hook-timestamp': String(seconds(input.now)),
          'sentry-hook-signature': signSentry({ payload: body, secret: input.secret }),
        },
      };
    },
  },
  vercel: {
    type: 'deployment.created',
    build(input) {
      const id = `evt_${randomUUID()}`;
      const { body, key } = bodyOf(
        input,
        { id, type: input.type, createdAt: input.now.getTime(), payload: { deployment: { id: 'dpl_1' } } },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: { ...JSON_TYPE, 'x-vercel-signature': signVercel({ payload: body, secret: input.secret }) },
      };
    },
  },
  segment: {
    type: 'track.Order Completed',
    build(input) {
      const id = `ajs-${randomUUID()}`;
      const [type, event] = split(input.type);
      const { body, key } = bodyOf(
        input,
        { messageId: id, type, event, userId: 'u_1', timestamp: input.now.toISOString(), properties: {} },
        id,
      );
      return {
        body,
        key,
        type: input.type,
        headers: { ...JSON_TYPE, 'x-signature': signSegment({ payload: body, secret: input.secret }) },
      };
    },
  },
};
