/**
 * A real OpenID Connect provider for the console's tests: `oidc-provider` (the certified implementation) on a
 * loopback port, with its development login and consent pages, one static confidential client (the console) and a
 * few accounts whose `groups` claim says which console role they get. Not a test file.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export const CLIENT_ID = 'webhook-inbox-console';
export const CLIENT_SECRET = 'console-client-secret-0123456789abcdef';

/** Login name → groups: their `groups` claim; the email is `<login>@example.com`. */
export const ACCOUNTS: Record<string, string[]> = {
  ada: ['platform-admins', 'staff'],
  olga: ['oncall', 'staff'],
  vic: ['readers'],
  nobody: ['contractors'],
};

export const ROLE_MAPPING = 'platform-admins=admin,oncall=operator,readers=viewer';

export interface IdentityProvider {
  /** The issuer URL, `http://localhost:<port>`: another site than the console's `127.0.0.1`, as in production. */
  issuer: string;
  /** Registers the console's callback (known once the console listens). */
  register(redirectUri: string): void;
  stop(): Promise<void>;
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
    register(redirectUri) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            redirect_uris: [redirectUri],
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
          return {
            accountId: sub,
            claims: () => ({ sub, email: `${sub}@example.com`, email_verified: true, name: sub, groups }),
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
