import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/env.ts';
import { configIssues } from './helpers.ts';
import { writeSourcesFile } from './sources-fixture.ts';
import { RECEIVER_ARGS } from '@webhook-inbox/scenarios/receiver';

// The sources file is read and validated once, at start-up: every mistake is reported with the source and the
// field it is in, and a receiver given a wrong file exits 2 before it listens.

const DB = 'postgres://u:p@127.0.0.1:5432/db';

const issuesOf = (env: Record<string, string>): string[] => configIssues(DB, env);

const WRONG = `
sources:
  github:
    type: hmac
    secrets: [s1]
    hmac: { algorithm: md5 }
    eventKey: { header: X-GitHub-Delivery }
  slack:
    type: hmac
    secrets: [s2]
    hmac: { header: X-Slack-Signature, signed: "v0:{timestamp}:{body}" }
    eventKey: { pointer: event_id }
  forms:
    type: basic-auth
    secrets: [user:pass]
  meta:
    type: hmac
    secrets: [s3]
    hmac: { header: X-Hub-Signature-256 }
    eventKey: { bodyHash: true }
    handshake: { type: meta }
  acme-pay:
    type: acme-pay
    secrets: [s4]
  Bad_Name:
    type: shopify
    secrets: [s5]
  nosecret:
    type: api-key
    apiKey: { header: X-Key }
    eventKey: { pointer: /id }
`;

describe('WEBHOOK_SOURCES_FILE', () => {
  it('reports every mistake, each naming the source and the field, never a secret', () => {
    const path = writeSourcesFile(WRONG);
    const issues = issuesOf({ WEBHOOK_SOURCES_FILE: path });
    const expected = [
      /source "github": hmac\.header: /,
      /source "github": hmac\.algorithm: /,
      /source "slack": eventKey\.pointer: JSON pointer "event_id" must be empty or start with "\/"/,
      /source "forms": eventKey: is required: .*bodyHash: true/,
      /source "meta": handshake\.verifyToken: meta needs verifyToken/,
      /source "acme-pay": type: type must be one of stripe, shopify, standard-webhooks, hmac, basic-auth, api-key, ed25519, adyen, aws-sns, bitbucket/,
      /source name "Bad_Name": /,
    ];
    for (const pattern of expected) {
      expect(
        issues.some((issue) => pattern.test(issue)),
        `${pattern}\n${issues.join('\n')}`,
      ).toBe(true);
    }
    for (const issue of issues) expect(issue).toMatch(new RegExp(`^WEBHOOK_SOURCES_FILE \\(${path}\\): `));
    expect(issues.join('\n')).not.toMatch(/s1|s2|s3|user:pass/);
  });

  it('checks across fields: {timestamp} needs its header; a missing secret; a batch keyed by a header', () => {
    const path = writeSourcesFile(`
sources:
  slack:
    type: hmac
    secrets: [s2]
    hmac: { header: X-Slack-Signature, signed: "v0:{timestamp}:{body}" }
    eventKey: { pointer: /event_id }
  twilio:
    type: hmac
    secrets: [t]
    hmac: { header: X-Twilio-Signature, signed: "{url}{form}" }
    eventKey: { pointer: /CallSid }
  nosecret:
    type: api-key
    apiKey: { header: X-Key }
    eventKey: { pointer: /id }
  batch:
    type: basic-auth
    secrets: [u:p]
    batch: { items: /items }
    eventKey: { header: X-Id }
`);
    const issues = issuesOf({ WEBHOOK_SOURCES_FILE: path }).join('\n');
    expect(issues).toMatch(/source "slack": hmac\.timestamp: is required by \{timestamp\}/);
    expect(issues).toMatch(/source "twilio": publicUrl: is required by \{url\}/);
    expect(issues).toMatch(/source "twilio": body: must be form for \{form\}/);
    expect(issues).toMatch(/source "batch": eventKey\.header: cannot key a batch/);
    const unsigned = writeSourcesFile(
      'sources:\n  t:\n    type: hmac\n    secrets: [s]\n    hmac: { header: X-S, timestamp: { header: X-T } }\n    eventKey: { bodyHash: true }\n',
    );
    expect(issuesOf({ WEBHOOK_SOURCES_FILE: unsigned }).join()).toMatch(
      /source "t": hmac\.signed: must contain \{timestamp\} when hmac\.timestamp is set/,
    );
    expect(
      issuesOf({ WEBHOOK_SOURCES_FILE: writeSourcesFile('sources:\n  x:\n    type: stripe\n') }).join(),
    ).toMatch(/source "x": secrets: at least one secret is required/);
  });

  it('refused at start-up: an event key from a header the signature does not cover (was accepted before)', () => {
    // One source a line: each keyed by a header; only the last two are keyed by what their authentication covers.
    const path = writeSourcesFile(`
sources:
  gh: { type: hmac, secrets: [s], hmac: { header: X-Hub-Signature-256 }, eventKey: { header: X-GitHub-Delivery } }
  slack-like: { type: hmac, secrets: [s], eventKey: { header: X-Delivery },
    hmac: { header: X-Sig, signed: "{timestamp}.{body}", timestamp: { header: X-Ts } } }
  interactions: { type: ed25519, secrets: ["${'ab'.repeat(32)}"], eventKey: { header: X-Interaction-Id } }
  signed-id: { type: hmac, secrets: [s], eventKey: { header: x-id },
    hmac: { header: X-Sig, signed: "{id}.{body}", id: { header: X-Id } } }
  bearer: { type: api-key, secrets: [k], apiKey: { header: X-Key }, eventKey: { header: X-Delivery } }
`);
    const issues = issuesOf({ WEBHOOK_SOURCES_FILE: path }).join('\n');
    expect(issues).toMatch(
      /source "gh": eventKey\.header: X-GitHub-Delivery is not covered by the signature/,
    );
    expect(issues).toMatch(
      /source "slack-like": eventKey\.header: X-Delivery is not covered by the signature/,
    );
    expect(issues).toMatch(/source "interactions": eventKey\.header: X-Interaction-Id is not covered/);
    // The header the signature covers ({id}), and a credential source (nothing is signed there): accepted.
    expect(issues).not.toMatch(/"signed-id"|"bearer"/);
  });

  it('refused at start-up: a crc handshake where a token it answers could be a signed body (was accepted before)', () => {
    const path = writeSourcesFile(`
sources:
  x-form: { type: hmac, secrets: [s], hmac: { header: X-Sig }, body: form, eventKey: { bodyHash: true },
    handshake: { type: crc } }
  x-timestamped: { type: hmac, secrets: [s], eventKey: { bodyHash: true }, handshake: { type: crc },
    hmac: { header: X-Sig, signed: "{timestamp}{body}", timestamp: { header: X-Ts } } }
  x-keyed: { type: api-key, secrets: [k], apiKey: { header: X-Key }, eventKey: { bodyHash: true },
    handshake: { type: crc } }
`);
    const issues = issuesOf({ WEBHOOK_SOURCES_FILE: path }).join('\n');
    for (const source of ['x-form', 'x-timestamped', 'x-keyed']) {
      expect(issues).toMatch(new RegExp(`source "${source}": handshake\\.type: crc answers anyone`));
    }
  });

  it('a malformed secret, a clash with the environment, an unreadable secret file, a file that is not YAML', () => {
    const stripe = writeSourcesFile(
      'sources:\n  eu:\n    type: standard-webhooks\n    secrets: ["whsec_!!"]\n',
    );
    expect(issuesOf({ WEBHOOK_SOURCES_FILE: stripe }).join()).toMatch(
      /source "eu": secret #1 is not "whsec_"/,
    );
    const clash = writeSourcesFile('sources:\n  stripe:\n    type: stripe\n    secrets: [whsec_a]\n');
    expect(issuesOf({ WEBHOOK_SOURCES_FILE: clash, STRIPE_WEBHOOK_SECRET: 'whsec_b' }).join()).toMatch(
      /source "stripe" is also configured by the environment/,
    );
    const missing = writeSourcesFile('sources:\n  x:\n    type: stripe\n    secretFiles: [nope.txt]\n');
    expect(issuesOf({ WEBHOOK_SOURCES_FILE: missing }).join()).toMatch(
      /source "x": secretFiles\.0: cannot read .*nope\.txt \(ENOENT\)/,
    );
    expect(issuesOf({ WEBHOOK_SOURCES_FILE: writeSourcesFile('sources: [\n') }).join()).toMatch(
      /is not valid YAML/,
    );
    expect(issuesOf({ WEBHOOK_SOURCES_FILE: '/nonexistent/sources.yaml' }).join()).toMatch(/cannot read/);
  });

  it('refused: a file that does not parse is reported by line, column and reason, never its text, which may hold a secret (the YAML parser quoted the line before)', () => {
    const planted = 'whsec_PLANTED0secret0value';
    const files = [
      [
        `sources:\n  eu:\n    type: stripe\n    secrets: ["${planted}" x]\n`,
        'sources.yaml',
        /line 4, column \d+: Missing , or : between flow sequence items \(MISSING_CHAR\)/,
      ],
      [
        `sources:\n  eu:\n    type: stripe\n    secrets: |${planted}\n      x\n`,
        'sources.yaml',
        /line 4, column \d+: Block scalar header includes extra characters \(UNEXPECTED_TOKEN\)/,
      ],
      [
        `sources:\n  eu:\n    type: stripe\n    secrets: ["${planted}\\q"]\n`,
        'sources.yaml',
        /line 4, column \d+: Invalid escape sequence/,
      ],
      [
        `{"sources": {"eu": {"type": "stripe", "secrets": ["${planted}" x]}}}`,
        'sources.json',
        /Expected ',' or ']' after array element at position \d+/,
      ],
      [
        `{"sources": {"eu": {"type": "stripe", "secrets": [${planted}]}}}`,
        'sources.json',
        /Unexpected token/,
      ],
    ] as const;
    for (const [text, name, reason] of files) {
      const issues = issuesOf({ WEBHOOK_SOURCES_FILE: writeSourcesFile(text, name) }).join('\n');
      expect(issues, text).toMatch(reason);
      expect(issues, text).not.toContain('PLANTED');
    }
  });

  it('reads JSON, secretFiles relative to the file (trimmed), and <NAME>_FILE variables', () => {
    const path = writeSourcesFile(
      JSON.stringify({
        sources: {
          'stripe-eu': { type: 'stripe', secretFiles: ['stripe-eu.secret'] },
          github: {
            type: 'hmac',
            secrets: ['inline'],
            hmac: { header: 'X-Hub-Signature-256', prefix: 'sha256=' },
            eventKey: { bodyHash: true },
          },
        },
      }),
      'sources.json',
    );
    writeFileSync(join(dirname(path), 'stripe-eu.secret'), 'whsec_from_file\n');
    writeFileSync(join(dirname(path), 'shopify.secret'), 'shpss_from_file\n');
    const config = parseConfig({
      DATABASE_URL: DB,
      WEBHOOK_SOURCES_FILE: path,
      SHOPIFY_WEBHOOK_SECRET_FILE: join(dirname(path), 'shopify.secret'),
    });
    expect(config.sources.map(({ name, type, secrets }) => ({ name, type, secrets }))).toEqual([
      { name: 'stripe-eu', type: 'stripe', secrets: ['whsec_from_file'] },
      { name: 'github', type: 'hmac', secrets: ['inline'] },
    ]);
    expect(config.shopifySecrets).toEqual(['shpss_from_file']);
    expect(
      issuesOf({
        SHOPIFY_WEBHOOK_SECRET: 'a',
        SHOPIFY_WEBHOOK_SECRET_FILE: join(dirname(path), 'shopify.secret'),
      }),
    ).toContain('SHOPIFY_WEBHOOK_SECRET and SHOPIFY_WEBHOOK_SECRET_FILE are both set; keep one');
  });

  it('examples/sources.yaml (the documented example) loads beside the environment', () => {
    const example = fileURLToPath(new URL('../../../examples/sources.yaml', import.meta.url));
    const config = parseConfig({
      DATABASE_URL: DB,
      WEBHOOK_SOURCES_FILE: example,
      STRIPE_WEBHOOK_SECRET: 'whsec_a',
    });
    expect(config.sources.map(({ name }) => name)).toContain('adyen');
    expect(config.sources.length).toBeGreaterThan(10);
  });

  it('a receiver process given a wrong file exits 2 and says what is wrong', async () => {
    const path = writeSourcesFile(WRONG);
    const child = spawn(process.execPath, [...RECEIVER_ARGS], {
      env: { DATABASE_URL: DB, WEBHOOK_SOURCES_FILE: path },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/^receiver: invalid configuration:/);
    expect(stderr).toContain(`WEBHOOK_SOURCES_FILE (${path}): source "meta": handshake.verifyToken:`);
  });
});
