/**
 * The console's sign-in option for the test identity provider of `@webhook-inbox/testing/oidc`, which this file
 * re-exports for the console's tests. Not a test file.
 */
import { CLIENT_ID, CLIENT_SECRET, ROLE_MAPPING, type IdentityProvider } from '@webhook-inbox/testing/oidc';
import type { OidcOptions } from '../src/auth/oidc.ts';
import { parseRoleMap } from '../src/auth/role-map.ts';

export * from '@webhook-inbox/testing/oidc';

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
