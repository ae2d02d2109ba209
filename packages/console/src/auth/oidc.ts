import type { Role } from '@webhook-inbox/operator/access/roles';
import * as client from 'openid-client';
import { ConsoleError } from '../errors.ts';
import { claimValues, type RoleMap } from './role-map.ts';

/** The console as a client of the company's identity provider (OpenID Connect). */
export interface OidcOptions {
  /** The provider's issuer URL (its `/.well-known/openid-configuration` is read from it); HTTPS unless loopback. */
  issuer: string;
  clientId: string;
  /** The console is a confidential client: the code is exchanged with this secret and a PKCE verifier. */
  clientSecret: string;
  /**
   * The callback URL registered at the provider, `https://<console host>/console/login/callback`. Default: built from
   * the request's scheme and `Host` (the provider still only accepts what is registered).
   */
  redirectUrl?: string | undefined;
  /**
   * The claim (ID token, else userinfo) whose values `roles` maps. Default `groups`. `email` maps the address only
   * when the provider says it verified it (`email_verified: true`).
   */
  roleClaim?: string | undefined;
  roles: RoleMap;
  /** Default `openid email profile`; some providers need one more for the groups (Okta: `groups`). */
  scopes?: string | undefined;
  /** The provider's name on the sign-in button. Default `single sign-on`. */
  name?: string | undefined;
}

/** A sign-in begun: where to send the browser, and what its callback must match (kept in a signed cookie). */
interface OidcStart {
  authorizationUrl: URL;
  pending: { state: string; nonce: string; verifier: string; redirect: string };
}

/** A verified sign-in: the audit actor and the role it maps to (undefined: no entry of `OIDC_ROLES` matched). */
interface OidcIdentity {
  /** The email the provider verified, else `oidc:<sub>@<issuer host>` (issuer and subject name one account). */
  actor: string;
  subject: string;
  role: Role | undefined;
  /** The consumer groups the role is limited to (`OIDC_ROLES`' `role@group`); `null`: every group. */
  groups: readonly string[] | null;
  /** The role claim's values, for the refusal page and the audit row. */
  values: string[];
  /** An email the provider sent without `email_verified: true`: used for nothing, named on a refusal. */
  unverifiedEmail: string | undefined;
}

export interface OidcClient {
  readonly name: string;
  /** The claim whose values `OIDC_ROLES` maps. */
  readonly roleClaim: string;
  /** The callback URL for a request whose console origin is `origin` (e.g. `https://ops.example.com`). */
  redirectUrl(origin: string, base: string): string;
  start(redirect: string): Promise<OidcStart>;
  /** Exchanges the callback's code (with the PKCE verifier) and verifies the ID token's signature, state and nonce. */
  finish(pending: OidcStart['pending'], search: string): Promise<OidcIdentity>;
}

/** The provider's metadata is read on the first sign-in and kept; a failed read is tried again on the next one. */
export function createOidcClient(options: OidcOptions): OidcClient {
  const issuer = new URL(options.issuer);
  let configuration: Promise<client.Configuration> | undefined;
  const configured = () => {
    configuration ??= client
      .discovery(
        issuer,
        options.clientId,
        options.clientSecret,
        client.ClientSecretBasic(options.clientSecret),
        // Plain HTTP only to a provider on this machine (a test or development identity provider).
        isLoopback(issuer) && issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {},
      )
      .catch((error: unknown) => {
        configuration = undefined;
        throw unavailable(error);
      });
    return configuration;
  };
  const claim = options.roleClaim ?? 'groups';

  return {
    name: options.name ?? 'single sign-on',
    roleClaim: claim,
    redirectUrl: (origin, base) => options.redirectUrl ?? `${origin}${base}/login/callback`,
    async start(redirect) {
      const config = await configured();
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const authorizationUrl = client.buildAuthorizationUrl(config, {
        redirect_uri: redirect,
        scope: options.scopes ?? 'openid email profile',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { authorizationUrl, pending: { state, nonce, verifier, redirect } };
    },
    async finish(pending, search) {
      const config = await configured();
      const callback = new URL(pending.redirect);
      callback.search = search;
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: pending.verifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw refusal(error);
      }
      const claims = tokens.claims();
      if (!claims) throw new ConsoleError('oidc_failed', 'the identity provider sent no ID token');
      let source: Record<string, unknown> = claims;
      // Providers that keep claims out of the ID token (oidc-provider, Okta's groups) give them from userinfo, for
      // the same subject (checked); `email_verified` too, without which an email proves nothing.
      const missing = [claim, 'email', 'email_verified'].some((name) => !(name in claims));
      if (missing && config.serverMetadata().userinfo_endpoint) {
        const info = await client
          .fetchUserInfo(config, tokens.access_token, claims.sub)
          .catch((error: unknown) => {
            throw refusal(error);
          });
        source = { ...info, ...claims };
      }
      const email = typeof source.email === 'string' ? source.email : undefined;
      // Only the boolean true is a verification: false, absent and the string "false" leave the address unproven,
      // and anyone can type an unproven address at many providers. It then neither names the actor nor maps a role.
      const verified = email !== undefined && source.email_verified === true;
      const values = claim === 'email' && !verified ? [] : claimValues(source[claim]);
      const actor = verified ? email : `oidc:${claims.sub}@${issuer.host}`;
      const grant = options.roles.grantFor(values);
      return {
        actor,
        subject: claims.sub,
        role: grant?.role,
        groups: grant?.groups ?? null,
        values,
        unverifiedEmail: verified ? undefined : email,
      };
    },
  };
}

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) || url.hostname.startsWith('127.');
}

function unavailable(error: unknown): ConsoleError {
  return new ConsoleError('unavailable', 'the identity provider cannot be reached: try again shortly', {
    cause: error,
  });
}

/** A refused exchange (the provider's error, a bad state or signature) is the user's to retry; a network error is not. */
function refusal(error: unknown): ConsoleError {
  if (error instanceof client.AuthorizationResponseError) {
    return new ConsoleError('oidc_failed', `the identity provider refused the sign-in: ${error.error}`, {
      cause: error,
    });
  }
  if (error instanceof client.ResponseBodyError || error instanceof client.ClientError) {
    return new ConsoleError('oidc_failed', 'the sign-in could not be verified: start it again', {
      cause: error,
    });
  }
  return unavailable(error);
}
