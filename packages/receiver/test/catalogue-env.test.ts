import { CATALOGUE } from '@webhook-inbox/providers';
import { useTempFiles, sampleCredentials } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/env.ts';
import { configIssues } from './helpers.ts';

// The catalogue's variables: `<TYPE>_WEBHOOK_SECRET` (and `_FILE`, and `<TYPE>_WEBHOOK_URL` where the provider
// signs its URL) declare a source named after the type; every problem is reported at start-up, naming the variable.

const DB = 'postgres://inbox:inbox@127.0.0.1:5432/inbox';

const issuesOf = (env: Record<string, string>): string[] => configIssues(DB, env);

const files = useTempFiles('catalogue-env-');
const tempFile = (name: string, text: string): string => files.write(name, text);

describe('catalogue variables', () => {
  it('has one <TYPE>_WEBHOOK_SECRET per catalogue entry, each declaring /webhooks/<type>', () => {
    const env = Object.fromEntries(
      CATALOGUE.flatMap((entry): [string, string][] => [
        [entry.envVar, entry.type === 'github' ? 'github-a, github-b' : sampleCredentials(entry).secret],
        ...(entry.facts.requiredOptions.includes('url')
          ? [
              [
                entry.envVar.replace(/_SECRET$/, '_URL'),
                `https://hooks.example.com/webhooks/${entry.type}`,
              ] as [string, string],
            ]
          : []),
        ...(entry.facts.requiredOptions.includes('verifyToken')
          ? [[entry.envVar.replace(/_SECRET$/, '_VERIFY_TOKEN'), 'dashboard-token'] as [string, string]]
          : []),
      ]),
    );
    const { sources } = parseConfig({ DATABASE_URL: DB, ...env });
    expect(sources.find((source) => source.name === 'meta')).toMatchObject({
      verifyToken: 'dashboard-token',
    });
    expect(sources.map(({ name, type }) => [name, type])).toEqual(CATALOGUE.map(({ type }) => [type, type]));
    expect(sources.find((source) => source.name === 'github')?.secrets).toEqual(['github-a', 'github-b']);
  });

  it('reads <TYPE>_WEBHOOK_SECRET_FILE, trimmed', () => {
    const file = tempFile('github-secret', 'from-a-file\n');
    const { sources } = parseConfig({ DATABASE_URL: DB, GITHUB_WEBHOOK_SECRET_FILE: file });
    expect(sources).toEqual([
      { name: 'github', type: 'github', secrets: ['from-a-file'], secretFiles: [], url: undefined },
    ]);
    expect(issuesOf({ GITHUB_WEBHOOK_SECRET: 'x', GITHUB_WEBHOOK_SECRET_FILE: file })).toEqual([
      'GITHUB_WEBHOOK_SECRET and GITHUB_WEBHOOK_SECRET_FILE are both set; keep one',
    ]);
  });

  it('names the variable of a provider that needs its URL, or a malformed secret, never the secret', () => {
    const [square] = issuesOf({ SQUARE_WEBHOOK_SECRET: 'square-signature-key' });
    expect(square).toMatch(/^SQUARE_WEBHOOK_SECRET .*url/);
    const [postmark] = issuesOf({ POSTMARK_WEBHOOK_SECRET: 'no-colon-here' });
    expect(postmark).toMatch(/^POSTMARK_WEBHOOK_SECRET /);
    expect(postmark).not.toContain('no-colon-here');
    // The certificate-based providers' secrets are what they accept: a topic ARN, a PayPal webhook id.
    const [sns] = issuesOf({ AWS_SNS_WEBHOOK_SECRET: 'whsec-not-a-topic' });
    expect(sns).toMatch(/^AWS_SNS_WEBHOOK_SECRET .*topic ARN/);
    expect(sns).not.toContain('whsec-not-a-topic');
    const [paypal] = issuesOf({ PAYPAL_WEBHOOK_SECRET: 'not-a-webhook-id!' });
    expect(paypal).toMatch(/^PAYPAL_WEBHOOK_SECRET .*webhook id/);
    expect(issuesOf({ GITHUB_WEBHOOK_SECRET: 'a,,b' })).toEqual([
      'GITHUB_WEBHOOK_SECRET has an empty entry in its comma-separated list',
    ]);
  });

  it('refuses a name declared by both a variable and the sources file', () => {
    const file = tempFile(
      'sources.yaml',
      'sources:\n  github:\n    type: github\n    secrets: [file-secret]\n',
    );
    expect(issuesOf({ GITHUB_WEBHOOK_SECRET: 'env-secret', WEBHOOK_SOURCES_FILE: file })).toEqual([
      'GITHUB_WEBHOOK_SECRET and source "github" of WEBHOOK_SOURCES_FILE both declare /webhooks/github; keep one ' +
        "(or give the file's source another name)",
    ]);
  });
});

describe('catalogue sources in the sources file', () => {
  it('declares a source of a catalogue type under any name, and names the source and field of a wrong option', () => {
    const file = tempFile(
      'sources.yaml',
      'sources:\n  gh-org:\n    type: github\n    secrets: [a]\n  shop:\n    type: square\n    secrets: [b]\n' +
        '  crm:\n    type: hubspot\n    secrets: [c]\n    url: not-a-url\n  ci:\n    type: gitlab\n    secrets: [d]\n    url: https://x.example/\n',
    );
    const issues = issuesOf({ WEBHOOK_SOURCES_FILE: file });
    expect(issues).toEqual([
      expect.stringMatching(/source "shop": url: is required/),
      expect.stringMatching(/source "crm": url: must be the absolute http\(s\) URL/),
      expect.stringMatching(/source "ci": url: is not an option of gitlab/),
    ]);
    const ok = tempFile('ok.yaml', 'sources:\n  gh-org:\n    type: github\n    secrets: [a]\n');
    expect(parseConfig({ DATABASE_URL: DB, WEBHOOK_SOURCES_FILE: ok }).sources).toEqual([
      { name: 'gh-org', type: 'github', secrets: ['a'], secretFiles: [] },
    ]);
  });
});
