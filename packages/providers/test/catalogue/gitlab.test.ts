import { describe, expect, it } from 'vitest';
import { gitlabProvider, signGitlab } from '../../src/catalogue/providers/gitlab.ts';
import { refusal, request, without } from './support.ts';

// GitLab publishes no verification library or vector: its scheme is the token itself, compared as-is.
// https://docs.gitlab.com/user/project/integrations/webhooks/#create-an-optional-secret-token
const TOKEN = 'gl-secret-token';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  object_kind: 'merge_request',
  event_type: 'merge_request',
  object_attributes: { iid: 1, action: 'open' },
});
const HEADERS = {
  ...signGitlab({ secret: TOKEN, idempotencyKey: 'f7a8e3e4-3b0b-4e8c-9c1c-2f0b5d0e7c11' }),
  'X-Gitlab-Event': 'Merge Request Hook',
  'X-Gitlab-Event-UUID': '13792a34-cac6-4fda-95a8-c58e00a3954e',
  'X-Gitlab-Instance': 'https://gitlab.com',
};
const gitlab = gitlabProvider({ secrets: [TOKEN] });

describe('gitlab', () => {
  it('accepts the configured token, keyed by Idempotency-Key, typed by object_kind and action', () => {
    const event = gitlab.verify(request(BODY, HEADERS), NOW);
    expect(event).toMatchObject({
      provider: 'gitlab',
      eventId: 'f7a8e3e4-3b0b-4e8c-9c1c-2f0b5d0e7c11',
      type: 'merge_request.open',
      payloadText: BODY,
    });
    expect(event.headers).toEqual({
      'x-gitlab-event': 'Merge Request Hook',
      'x-gitlab-instance': 'https://gitlab.com',
      'x-gitlab-event-uuid': '13792a34-cac6-4fda-95a8-c58e00a3954e',
    });
  });

  it('falls back to X-Gitlab-Event-UUID, and types a system hook by event_name', () => {
    const body = '{"event_name":"project_create","name":"p"}';
    const event = gitlab.verify(request(body, without(HEADERS, 'idempotency-key')), NOW);
    expect(event.eventId).toBe('13792a34-cac6-4fda-95a8-c58e00a3954e');
    expect(event.type).toBe('project_create');
  });

  it('accepts any token of a rotation', () => {
    const rotating = gitlabProvider({ secrets: ['old-token', TOKEN] });
    expect(rotating.verify(request(BODY, HEADERS), NOW).type).toBe('merge_request.open');
  });

  it('refuses a wrong or missing token, and a delivery without any key', () => {
    expect(refusal(gitlab, BODY, { ...HEADERS, 'x-gitlab-token': 'gl-secret-tokem' }, NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(gitlab, BODY, { ...HEADERS, 'x-gitlab-token': TOKEN + 'x' }, NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(gitlab, BODY, without(HEADERS, 'x-gitlab-token'), NOW)).toBe('missing_signature');
    const keyless = without(without(HEADERS, 'idempotency-key'), 'x-gitlab-event-uuid');
    expect(refusal(gitlab, BODY, keyless, NOW)).toBe('invalid_payload');
  });
});
