import { sign, verify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { githubProvider, signGithub } from '../../src/catalogue/providers/github.ts';
import { refusal, request, tamper, without, verifiedEvent } from './support.ts';

// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
const DOCS = {
  secret: "It's a Secret to Everybody",
  payload: 'Hello, World!',
  signature: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
};

const SECRET = 'gh-webhook-secret';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({ action: 'opened', number: 7, pull_request: { id: 1, title: 'Add a thing' } });
const github = githubProvider({ secrets: [SECRET] });

function headers(signature: string): Record<string, string> {
  return {
    'X-Hub-Signature-256': signature,
    'X-GitHub-Event': 'pull_request',
    'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    'X-GitHub-Hook-ID': '292430182',
  };
}

describe('github', () => {
  it("signs GitHub's documented test vector", () => {
    expect(signGithub({ payload: DOCS.payload, secret: DOCS.secret })).toBe(DOCS.signature);
  });

  it('accepts what @octokit/webhooks-methods signs, and octokit accepts what signGithub signs', async () => {
    const event = github.verify(request(BODY, headers(await sign(SECRET, BODY))), NOW);
    expect(event).toEqual(
      verifiedEvent('github', BODY, {
        eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        type: 'pull_request.opened',
        headers: { 'x-github-event': 'pull_request', 'x-github-hook-id': '292430182' },
      }),
    );
    expect(await verify(SECRET, BODY, signGithub({ payload: BODY, secret: SECRET }))).toBe(true);
  });

  it('types an event without an action by its header alone', () => {
    const body = '{"ref":"refs/heads/main"}';
    const h = { ...headers(signGithub({ payload: body, secret: SECRET })), 'X-GitHub-Event': 'push' };
    expect(github.verify(request(body, h), NOW).type).toBe('push');
  });

  it('accepts any secret of a rotation, under its own source name', () => {
    const rotating = githubProvider({ name: 'github-acme', secrets: ['old-secret', SECRET] });
    const event = rotating.verify(request(BODY, headers(signGithub({ payload: BODY, secret: SECRET }))), NOW);
    expect(event.provider).toBe('github-acme');
  });

  it('refuses a tampered body, a wrong secret, a missing or malformed header, a missing delivery id', () => {
    const good = headers(signGithub({ payload: BODY, secret: SECRET }));
    expect(refusal(github, tamper(BODY), good, NOW)).toBe('invalid_signature');
    expect(refusal(github, BODY, headers(signGithub({ payload: BODY, secret: 'other' })), NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(github, BODY, without(good, 'x-hub-signature-256'), NOW)).toBe('missing_signature');
    const sha1 = { ...good, 'X-Hub-Signature-256': good['X-Hub-Signature-256']!.replace('sha256=', 'sha1=') };
    expect(refusal(github, BODY, sha1, NOW)).toBe('invalid_signature');
    expect(refusal(github, BODY, without(good, 'x-github-delivery'), NOW)).toBe('invalid_payload');
  });
});
