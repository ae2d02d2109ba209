import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { type CatalogueEntry } from '@webhook-inbox/providers';
import { catalogueDelivery, catalogueSampleType, type CatalogueDelivery } from '@webhook-inbox/samples';
import { useStarted, useTempFiles, useTestDatabase, sampleCredentials } from '@webhook-inbox/testing';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { post, receiverEnv } from '@webhook-inbox/scenarios/receiver';

// A receiver started in this process on a sources file declaring one source of each template and handshake,
// reached over real HTTP. The secrets are test values.

export const SECRETS = {
  github: ['gh-current-secret', 'gh-previous-secret'],
  slack: ['slack-signing-secret'],
  billing: ['acme-key-1', 'acme-key-2'],
  basic: ['hooks:first-password-0001', 'hooks:second-password-002'],
  apikey: ['api-key-one-0123456', 'api-key-two-0123456'],
  graph: ['graph-query-key-0123'],
  adyen: ['adyen:adyen-password-0123'],
  sendgrid: ['sendgrid-token-0123456'],
  twilio: ['12345'],
  zoom: ['zoom-secret-token'],
  meta: ['meta-app-secret'],
  x: ['x-consumer-secret'],
} as const;

export const STRIPE_EU_SECRET = 'whsec_test_second_stripe_account';
export const META_VERIFY_TOKEN = 'meta-verify-token';
export const TWILIO_PUBLIC_URL = 'https://mycompany.com/myapp.php';

/** Discord's key pair: the public key (hex, as Discord shows it) is the source's secret. */
const pair = generateKeyPairSync('ed25519');
export const DISCORD_PRIVATE_KEY = Buffer.from(
  (pair.privateKey.export({ format: 'jwk' }) as { d: string }).d,
  'base64url',
).toString('hex');
export const DISCORD_PUBLIC_KEY = Buffer.from(
  (createPublicKey(pair.privateKey).export({ format: 'jwk' }) as { x: string }).x,
  'base64url',
).toString('hex');

export function sourcesYaml(): string {
  const list = (values: readonly string[]) => `[${values.map((value) => JSON.stringify(value)).join(', ')}]`;
  return `
sources:
  stripe-eu:
    type: stripe
    secrets: [${STRIPE_EU_SECRET}]
  github:
    type: hmac
    secrets: ${list(SECRETS.github)}
    hmac: { header: X-Hub-Signature-256, prefix: "sha256=" }
    eventKey: { bodyHash: true }
    eventType: { header: X-GitHub-Event }
  slack:
    type: hmac
    secrets: ${list(SECRETS.slack)}
    hmac: &slack-signature
      header: X-Slack-Signature
      prefix: "v0="
      signed: "v0:{timestamp}:{body}"
      timestamp: { header: X-Slack-Request-Timestamp }
    eventKey: { pointer: /event_id }
    eventType: { pointer: /event/type }
    handshake: { type: slack }
  billing:
    type: hmac
    secrets: ${list(SECRETS.billing)}
    hmac:
      header: Acme-Signature
      algorithm: sha512
      encoding: base64url
      prefix: "v1,"
      separator: " "
      signed: "{id}.{timestamp}.{body}"
      id: { header: Acme-Id }
      timestamp: { header: Acme-Timestamp, toleranceSeconds: 60 }
    eventKey: { header: Acme-Id }
    eventType: { pointer: /type }
  basic:
    type: basic-auth
    secrets: ${list(SECRETS.basic)}
    eventKey: { pointer: /id }
    eventType: { pointer: /type }
  apikey:
    type: api-key
    secrets: ${list(SECRETS.apikey)}
    apiKey: { header: Authorization, prefix: "Bearer " }
    eventKey: { pointer: [/account, /id] }
    eventType: { constant: notification }
  graph:
    type: api-key
    secrets: ${list(SECRETS.graph)}
    apiKey: { query: key }
    batch: { items: /value }
    eventKey: { bodyHash: true }
    eventType: { pointer: /changeType }
    handshake: { type: graph }
    response: { status: 202 }
  adyen:
    type: basic-auth
    secrets: ${list(SECRETS.adyen)}
    batch: { items: /notificationItems }
    eventKey: { pointer: [/NotificationRequestItem/eventCode, /NotificationRequestItem/pspReference] }
    eventType: { pointer: /NotificationRequestItem/eventCode }
    response: { body: "[accepted]" }
  sendgrid:
    type: api-key
    secrets: ${list(SECRETS.sendgrid)}
    apiKey: { query: token }
    batch: { items: "" }
    eventKey: { pointer: /sg_event_id }
    eventType: { pointer: /event }
  twilio:
    type: hmac
    secrets: ${list(SECRETS.twilio)}
    hmac: { header: X-Twilio-Signature, algorithm: sha1, encoding: base64, signed: "{url}{form}" }
    body: form
    publicUrl: ${TWILIO_PUBLIC_URL}
    eventKey: { pointer: /CallSid }
    eventType: { constant: call }
  slack-interactivity:
    type: hmac
    secrets: ${list(SECRETS.slack)}
    hmac: *slack-signature
    body: form
    formJsonFields: [payload]
    eventKey: { pointer: /payload/trigger_id }
    eventType: { pointer: /payload/type }
  zoom:
    type: hmac
    secrets: ${list(SECRETS.zoom)}
    hmac:
      header: x-zm-signature
      prefix: "v0="
      signed: "v0:{timestamp}:{body}"
      timestamp: { header: x-zm-request-timestamp }
    eventKey: { pointer: [/event, /event_ts] }
    eventType: { pointer: /event }
    handshake: { type: zoom }
  meta:
    type: hmac
    secrets: ${list(SECRETS.meta)}
    hmac: { header: X-Hub-Signature-256, prefix: "sha256=" }
    eventKey: { bodyHash: true }
    eventType: { pointer: /object }
    handshake: { type: meta, verifyToken: ${META_VERIFY_TOKEN} }
  discord:
    type: ed25519
    secrets: ["${DISCORD_PUBLIC_KEY}"]
    eventKey: { pointer: /id }
    eventType: { pointer: /type }
    handshake: { type: discord }
  x:
    type: hmac
    secrets: ${list(SECRETS.x)}
    hmac: { header: x-twitter-webhooks-signature, encoding: base64, prefix: "sha256=" }
    eventKey: { bodyHash: true }
    eventType: { constant: activity }
    handshake: { type: crc }
`;
}

// Registered on each test file that imports this module, and removed after its tests.
const sourcesFiles = useTempFiles('webhook-sources-');

/** Writes the sources file into a fresh directory and returns its path. */
export function writeSourcesFile(text = sourcesYaml(), name = 'sources.yaml'): string {
  return sourcesFiles.write(name, text);
}

/** A receiver on the sources file, listening on a free port. */
export function startSourcesReceiver(
  databaseUrl: string,
  extra: Record<string, string> = {},
): Promise<Receiver> {
  return startReceiver(
    parseConfig(
      receiverEnv(databaseUrl, {
        PORT: '0',
        WEBHOOK_SOURCES_FILE: writeSourcesFile(),
        LOG_LEVEL: 'silent',
        ...extra,
      }),
    ),
  );
}

/**
 * The test file's database and a receiver on the sources file (with `extra()` env), started before the file's tests
 * and closed after them. Call at the top level of a test file; read `receiver` inside tests only.
 */
export function useSourcesReceiver(extra: () => Record<string, string> = () => ({})): {
  readonly db: ReturnType<typeof useTestDatabase>;
  readonly receiver: Receiver;
} {
  const db = useTestDatabase();
  const started = useStarted(
    'the sources receiver',
    () => startSourcesReceiver(db.url, extra()),
    (receiver) => receiver.close(),
  );
  return {
    db,
    get receiver(): Receiver {
      return started.value;
    },
  };
}

export interface Answer {
  status: number;
  body: string;
  contentType: string | undefined;
}

/** One request on its own connection: `body` sent as is, with exactly `headers`. */
export async function request(
  baseUrl: string,
  path: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const delivery = { provider: '', key: '', path, body: options.body ?? '', headers: options.headers ?? {} };
  const result = await post(baseUrl, delivery, { method: options.method, timeoutMs: 30_000 });
  return { status: result.status, body: result.body, contentType: result.headers['content-type'] };
}

/**
 * A catalogue type's sample delivery (its sample type, or `payload`), signed with its sample credentials and, for the
 * providers that sign their URL, `url`; `undefined` for a type without a sample.
 */
export function sampleDelivery(
  entry: CatalogueEntry,
  url: string | undefined,
  payload?: string,
): CatalogueDelivery | undefined {
  return catalogueDelivery(entry.type, {
    ...sampleCredentials(entry),
    url,
    type: catalogueSampleType(entry.type) ?? 'unknown',
    payload,
  });
}

/** The error code of a JSON error answer. */
export function codeOf(answer: Answer): string | undefined {
  try {
    return (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}
