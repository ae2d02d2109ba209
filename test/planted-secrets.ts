/**
 * The planted secrets of `secrets.test.ts`: every secret-bearing variable of the receiver's and the worker's
 * schemas, and every secret of a sources file, set to a value unique to this run, so that a test can grep whatever
 * the processes wrote, answered and exported for each. Not a test file.
 */
import { randomBytes } from 'node:crypto';
import { CATALOGUE } from '@webhook-inbox/providers';
import { sampleCredentials } from '@webhook-inbox/testing';
import { RECEIVER_VARIABLES } from '../packages/receiver/src/config/env.ts';
import { WORKER_VARIABLES } from '../apps/worker/src/env.ts';

const RUN = randomBytes(6).toString('hex');

/** A value no code or fixture holds: `pl4nted-<label>-<run>` (letters, digits and `-`, as every format accepts). */
export const plant = (label: string): string => `pl4nted-${label.toLowerCase().replaceAll('_', '-')}-${RUN}`;

/**
 * Names a variable whose value may carry a credential: a secret, token, password or key; a URL (a password, a
 * webhook token in its path); the Standard Webhooks list. A new variable so named needs a planted value below, or
 * an entry in NOT_SECRET saying why it is none.
 */
export const SECRET_NAME = /SECRET|TOKEN|PASSWORD|_KEY$|_URL$|WEBHOOKS$/;

/** Variables so named that hold nothing secret, and why. */
export const NOT_SECRET: Record<string, string> = {
  DISCORD_WEBHOOK_SECRET: "Discord's Ed25519 public key",
  SENDGRID_WEBHOOK_SECRET: "SendGrid's ECDSA public key",
  AWS_SNS_WEBHOOK_SECRET: 'the SNS topic ARN the messages must name (AWS signs with its certificate)',
  PAYPAL_WEBHOOK_SECRET: 'the PayPal webhook id the messages must name (PayPal signs with its certificate)',
  SQUARE_WEBHOOK_URL: 'the public URL Square signs',
  HUBSPOT_WEBHOOK_URL: 'the public URL HubSpot signs',
  TWILIO_WEBHOOK_URL: 'the public URL Twilio signs',
  OIDC_REDIRECT_URL: "the console's public callback URL",
  CONSOLE_PUBLIC_URL: "the console's public address, which alerts link to",
};

/** What a planted value must look like for the catalogue type that reads it. */
function catalogueSecret(type: string, value: string): string {
  if (type === 'postmark') return `hooks:${value}`;
  if (type === 'adyen') return Buffer.from(value).toString('hex');
  if (type === 'resend' || type === 'clerk') return `whsec_${Buffer.from(value).toString('base64')}`;
  return value;
}

export interface PlantedEnvironment {
  receiver: Record<string, string>;
  worker: Record<string, string>;
  sourcesYaml: string;
  /** Each planted value, by where it was planted (`receiver <variable>`, `worker <variable>`, `sources <name>`). */
  planted: Record<string, string>;
  /** The sources file's secrets by source: what a test sends to reach past authentication. */
  fileSecrets: { hmac: string; query: string; basic: string; verifyToken: string };
}

/**
 * The environment of both processes (the receiver's `WEBHOOK_SOURCES_FILE` is the caller's to add, once it wrote
 * `sourcesYaml`). `databaseUrl` holds the planted database password already; `smtpPort` and
 * `alertUrl` are the local SMTP server and alert receiver.
 */
export function plantedEnvironment(options: {
  databaseUrl: string;
  databasePassword: string;
  smtpPort: number;
  alertUrl: string;
  oidcIssuer: string;
}): PlantedEnvironment {
  const planted: Record<string, string> = {
    'receiver DATABASE_URL': options.databasePassword,
    'worker DATABASE_URL': options.databasePassword,
  };
  const receiver: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    OIDC_ISSUER: options.oidcIssuer,
    OIDC_CLIENT_ID: 'webhook-inbox-console',
    OIDC_ROLES: 'platform-admins=admin',
  };
  const worker: Record<string, string> = { DATABASE_URL: options.databaseUrl };
  const set = (env: Record<string, string>, name: string, value: string, configured = value) => {
    planted[`${env === worker ? 'worker' : 'receiver'} ${name}`] = value;
    env[name] = configured;
  };
  for (const name of ['STRIPE_WEBHOOK_SECRET', 'SHOPIFY_WEBHOOK_SECRET', 'ADMIN_TOKEN']) {
    set(receiver, name, plant(name));
  }
  set(receiver, 'OIDC_CLIENT_SECRET', plant('OIDC_CLIENT_SECRET'));
  set(receiver, 'CONSOLE_SESSION_SECRET', plant('CONSOLE_SESSION_SECRET'));
  const standard = `whsec_${Buffer.from(plant('STANDARD_WEBHOOKS')).toString('base64')}`;
  set(receiver, 'STANDARD_WEBHOOKS', standard, `acme=${standard}`);
  set(
    receiver,
    'ALERT_WEBHOOK_URL',
    plant('receiver-alert-hook'),
    `${options.alertUrl}/${plant('receiver-alert-hook')}`,
  );
  for (const entry of CATALOGUE) {
    if (entry.envVar in NOT_SECRET) receiver[entry.envVar] = sampleCredentials(entry).secret;
    else set(receiver, entry.envVar, catalogueSecret(entry.type, plant(entry.envVar)));
    const option = (suffix: string) => entry.envVar.replace(/_SECRET$/, `_${suffix}`);
    if (entry.facts.requiredOptions.includes('url')) {
      receiver[option('URL')] = `https://hooks.example.com/webhooks/${entry.type}`;
    }
    if (entry.facts.requiredOptions.includes('verifyToken')) {
      set(receiver, option('VERIFY_TOKEN'), plant(option('VERIFY_TOKEN')));
    }
  }

  const smtpPassword = plant('SMTP_URL');
  set(worker, 'SMTP_URL', smtpPassword, `smtp://mailer:${smtpPassword}@127.0.0.1:${options.smtpPort}`);
  set(
    worker,
    'ALERT_WEBHOOK_URL',
    plant('worker-alert-hook'),
    `${options.alertUrl}/${plant('worker-alert-hook')}`,
  );
  set(worker, 'STRIPE_API_KEY', `sk_test_${plant('STRIPE_API_KEY')}`);

  const fileSecrets = {
    hmac: plant('sources-file-hmac'),
    query: plant('sources-file-query'),
    basic: plant('sources-file-basic'),
    verifyToken: plant('sources-file-verify-token'),
  };
  for (const [name, value] of Object.entries(fileSecrets)) planted[`sources ${name}`] = value;
  const sourcesYaml = `
sources:
  file-hmac:
    type: hmac
    secrets: ["${fileSecrets.hmac}"]
    hmac: { header: X-Signature, prefix: "sha256=" }
    eventKey: { pointer: /id }
    eventType: { pointer: /type }
  file-query:
    type: api-key
    secrets: ["${fileSecrets.query}"]
    apiKey: { query: key }
    eventKey: { pointer: /id }
    eventType: { pointer: /type }
  file-basic:
    type: basic-auth
    secrets: ["hooks:${fileSecrets.basic}"]
    eventKey: { pointer: /id }
    eventType: { pointer: /type }
  file-meta:
    type: hmac
    secrets: ["${fileSecrets.hmac}"]
    hmac: { header: X-Hub-Signature-256, prefix: "sha256=" }
    eventKey: { bodyHash: true }
    eventType: { pointer: /object }
    handshake: { type: meta, verifyToken: "${fileSecrets.verifyToken}" }
`;
  return { receiver, worker, sourcesYaml, planted, fileSecrets };
}

/** The secret-bearing variables of both schemas that have neither a planted value nor a reason in NOT_SECRET. */
export function unplanted(environment: PlantedEnvironment): string[] {
  const missing = (app: string, variables: readonly string[]) =>
    variables
      .filter((name) => SECRET_NAME.test(name) && !(name in NOT_SECRET))
      .map((name) => `${app} ${name}`)
      .filter((where) => !(where in environment.planted));
  return [...missing('receiver', RECEIVER_VARIABLES), ...missing('worker', WORKER_VARIABLES)];
}
