/**
 * A real OpenID Connect provider for the console's tests: `oidc-provider` (the certified implementation) on a
 * loopback port, with its development login and consent pages, one static confidential client (the console) and a
 * few accounts whose `groups` claim says which console role they get. Not a test file.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { OidcOptions } from '../src/auth/oidc.ts';
import { parseRoleMap } from '../src/auth/role-map.ts';

export const CLIENT_ID = 'webhook-inbox-console';
export const CLIENT_SECRET = 'console-client-secret-0123456789abcdef';

/** Login name → groups: their `groups` claim; the email is `<login>@example.com`. */
export const ACCOUNTS: Record<string, string[]> = {
  ada: ['platform-admins', 'staff'],
  olga: ['oncall', 'staff'],
  vic: ['readers'],
  // An operator of the billing team: its role is limited to consumer group billing (TEAM_ROLE_MAPPING).
  bill: ['billing-oncall'],
  // An operator of the default group's team, limited to it.
  dora: ['default-oncall'],
  nobody: ['contractors'],
  // Accounts whose address the provider has not verified (EMAIL_VERIFIED): the console must not trust it.
  eve: ['readers'],
  abe: ['readers'],
  stu: ['readers'],
};

/** `email_verified` as each account's claims carry it (`true` for the accounts not listed; `absent`: no claim). */
export const EMAIL_VERIFIED: Record<string, unknown> = { eve: false, abe: 'absent', stu: 'false' };

export const ROLE_MAPPING = 'platform-admins=admin,oncall=operator,readers=viewer';
/** ROLE_MAPPING and the billing and default teams' operators, each limited to its consumer group. */
export const TEAM_ROLE_MAPPING = `${ROLE_MAPPING},billing-oncall=operator@billing,default-oncall=operator@default`;

export interface IdentityProvider {
  /** The issuer URL, `http://localhost:<port>`: another site than the console's `127.0.0.1`, as in production. */
  issuer: string;
  /** Registers the consoles' callbacks (known once they listen). */
  register(...redirectUris: string[]): void;
  stop(): Promise<void>;
}

/** The console's `oidc` option for `idp`: its groups claim mapped by ROLE_MAPPING, unless `overrides` say otherwise. */
export function consoleOidc(idp: IdentityProvider, overrides: Partial<OidcOptions> = {}): OidcOptions {
  return {
    issuer: idp.issuer,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    roles: parseRoleMap(ROLE_MAPPING),
    scopes: 'openid email profile groups',
    ...overrides,
  };
}

/** Listens first, so the issuer is known before the console starts; the provider is made once the console's URL is. */
export async function startIdentityProvider(): Promise<IdentityProvider> {
  let handler: ReturnType<Provider['callback']> | undefined;
  const server: Server = createServer((req, res) => {
    if (handler) void handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    register(...redirectUris) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            redirect_uris: redirectUris,
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        claims: { email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
        pkce: { required: () => true },
        features: { devInteractions: { enabled: true } },
        cookies: { keys: ['identity-provider-test-cookie-key'] },
        findAccount: (_ctx, sub) => {
          const groups = ACCOUNTS[sub];
          if (!groups) return undefined;
          const verified = EMAIL_VERIFIED[sub] ?? true;
          return {
            accountId: sub,
            claims: () => ({
              sub,
              email: `${sub}@example.com`,
              ...(verified === 'absent' ? {} : { email_verified: verified }),
              name: sub,
              groups,
            }),
          };
        },
      });
      handler = provider.callback();
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** The cookies of a browser, by name (path and domain do not matter between the two loopback servers here). */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): Response {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      this.#cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  }
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Signs `login` in over plain HTTP, as a browser would: the console's `/login/oidc`, the provider's development
 * login and consent forms, and the redirects between them. Returns the console callback's response (its session
 * cookie, or its refusal) and that cookie as a header value when the console set one.
 */
export async function signInOverHttp(
  consoleUrl: string,
  login: string,
): Promise<{ callback: Response; session: string | undefined }> {
  const jar = new CookieJar();
  const go = async (url: string, form?: Record<string, string>) =>
    jar.take(
      await fetch(url, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: jar.header(),
          accept: 'text/html',
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { body: new URLSearchParams(form).toString() } : {}),
      }),
    );
  let response = await go(`${consoleUrl}/login/oidc`);
  let url = `${consoleUrl}/login/oidc`;
  const callback = `${consoleUrl}/login/callback`;
  for (let step = 0; step < 12; step++) {
    const location = response.headers.get('location');
    if (!location) throw new Error(`${url} answered ${response.status} without a redirect`);
    url = new URL(location, url).href;
    if (url.startsWith(callback)) {
      const answer = await go(url);
      const session = answer.headers
        .getSetCookie()
        .find((cookie) => cookie.startsWith('wi_console_session='))
        ?.split(';')[0];
      return { callback: answer, session };
    }
    response = await go(url);
    if (response.status === 200) {
      // One of the provider's two forms: the login, then the consent.
      const page = await response.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      if (prompt === undefined) throw new Error(`${url}: no form of the provider's in ${page.slice(0, 200)}`);
      response = await go(url, prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
    }
  }
  throw new Error(`signing ${login} in did not reach the console's callback`);
}
