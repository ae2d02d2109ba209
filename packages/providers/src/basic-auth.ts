import { InvalidSignatureError, MissingSignatureError } from './errors.ts';
import { assertPresentedSecrets, credentialDigest, headerValue, matchesCredential } from './shared.ts';
import { CREDENTIAL } from './template-rules.ts';
import type { TemplateSpec } from './template-schema.ts';
import { templateProvider } from './template-spec.ts';
import type { Provider, SignedRequest } from './types.ts';

export interface BasicAuthProviderOptions {
  name: string;
  /** `user:password` pairs; more than one during a rotation. */
  secrets: readonly string[];
  template: TemplateSpec;
}

/** The `Authorization` value a sender configured with `user:password` sends. */
function authorization(secret: string): string {
  return `Basic ${Buffer.from(secret, 'utf8').toString('base64')}`;
}

/**
 * A sender that authenticates with HTTP Basic credentials (Adyen, many form builders and CRMs): the whole
 * `Authorization` header is compared, in constant time and against every configured pair, with the one each
 * `user:password` secret gives. The body is not signed, so this proves only who sent it (over TLS). A password has
 * at least `MIN_PRESENTED_SECRET_LENGTH` characters, and the receiver bounds wrong guesses per client (`guessable`). The event key
 * and type are the template's (template-spec.ts).
 *
 * @example
 * const adyen = basicAuthProvider({ name: 'adyen', secrets: ['adyen:s3cret'], template });
 */
export function basicAuthProvider(options: BasicAuthProviderOptions): Provider {
  const { name } = options;
  options.secrets.forEach((secret, index) => {
    if (!secret.includes(':')) throw new TypeError(`${name}: secret #${index + 1} is not "user:password"`);
  });
  assertPresentedSecrets(name, options.secrets, 'password', (secret) =>
    secret.slice(secret.indexOf(':') + 1),
  );
  const digests = options.secrets.map((secret) => credentialDigest(authorization(secret)));
  const authenticate = (request: SignedRequest) => {
    const presented = headerValue(request.header('authorization'));
    if (presented === undefined)
      throw new MissingSignatureError(`${name}: the Authorization header is absent`);
    if (!matchesCredential(presented.replace(/^basic /i, 'Basic '), digests)) {
      throw new InvalidSignatureError(`${name}: the Basic credentials match no configured user:password`);
    }
  };
  return {
    ...templateProvider(name, options.template, options.secrets, authenticate, CREDENTIAL),
    guessable: true,
  };
}

/** The `Authorization` header for `user:password`, for tests and the CLI's `send`. */
export function signBasicAuth(secret: string): Record<string, string> {
  return { authorization: authorization(secret) };
}
