import { parseRoleMap, type OidcOptions } from '@webhook-inbox/console';
import { isRole, ROLES, type Role } from '@webhook-inbox/operator/access/roles';
import { blankToUndefined, ConfigError, parseEnv } from '@webhook-inbox/env';
import { z } from 'zod';

/** The console's sign-in configuration: single sign-on (OpenID Connect) and the session key. */
export interface ConsoleConfig {
  /** Undefined when `OIDC_ISSUER` is unset: only the break-glass sign-in (`ADMIN_TOKEN`). */
  oidc: OidcOptions | undefined;
  /** `CONSOLE_SESSION_SECRET`; unset: the session key is derived from `ADMIN_TOKEN` and `OIDC_CLIENT_SECRET`. */
  sessionSecret: string | undefined;
  /** `CONSOLE_MASKED_ROLES`: the roles that see subjects and error texts masked (default `viewer`; `none`: no role). */
  maskedRoles: readonly Role[];
}

const text = z.preprocess(blankToUndefined, z.string().trim().optional());

const LOOPBACK = /^(localhost|127(\.\d+){3}|\[::1\])$/;

const schema = z.object({
  OIDC_ISSUER: z.preprocess(
    blankToUndefined,
    z
      .url({ error: 'must be the identity provider issuer URL, e.g. https://login.example.com/' })
      .refine((value) => {
        const url = new URL(value);
        return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.test(url.hostname));
      }, 'must be an https:// URL (plain http only on this machine: localhost, 127.0.0.1, [::1])')
      .optional(),
  ),
  OIDC_CLIENT_ID: text,
  OIDC_CLIENT_SECRET: text,
  OIDC_REDIRECT_URL: z.preprocess(
    blankToUndefined,
    z
      .url({ error: 'must be the console callback URL, e.g. https://ops.example.com/console/login/callback' })
      .optional(),
  ),
  OIDC_ROLE_CLAIM: z.preprocess(blankToUndefined, z.string().trim().default('groups')),
  OIDC_ROLES: text,
  OIDC_SCOPES: z.preprocess(blankToUndefined, z.string().trim().default('openid email profile')),
  OIDC_PROVIDER_NAME: text,
  CONSOLE_SESSION_SECRET: z.preprocess(
    blankToUndefined,
    z.string().trim().min(32, { error: 'must be at least 32 characters' }).optional(),
  ),
  CONSOLE_MASKED_ROLES: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .default('viewer')
      .transform((value) =>
        value === 'none'
          ? []
          : value
              .split(',')
              .map((role) => role.trim())
              .filter(Boolean),
      )
      .refine((roles) => roles.every(isRole), {
        error: `must be roles (${ROLES.join(', ')}) separated by commas, or none`,
      })
      .transform((roles) => roles as Role[]),
  ),
});

/** Every variable the console's sign-in reads. */
export const CONSOLE_VARIABLES: readonly string[] = Object.keys(schema.shape);

const REQUIRED_WITH_ISSUER = ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_ROLES'] as const;

/** Parses the console's variables; each problem is added to `issues` (the receiver reports them all at once). */
export function parseConsoleConfig(env: Record<string, string | undefined>, issues: string[]): ConsoleConfig {
  let e: z.output<typeof schema>;
  try {
    e = parseEnv(schema, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
    return { oidc: undefined, sessionSecret: undefined, maskedRoles: ['viewer'] };
  }
  if (e.OIDC_ISSUER === undefined) {
    for (const name of [...REQUIRED_WITH_ISSUER, 'OIDC_REDIRECT_URL'] as const) {
      if (e[name] !== undefined) issues.push(`${name} is set but OIDC_ISSUER is not`);
    }
    return { oidc: undefined, sessionSecret: e.CONSOLE_SESSION_SECRET, maskedRoles: e.CONSOLE_MASKED_ROLES };
  }
  for (const name of REQUIRED_WITH_ISSUER) {
    if (e[name] === undefined) issues.push(`${name} is required when OIDC_ISSUER is set`);
  }
  let roles;
  try {
    roles = e.OIDC_ROLES === undefined ? undefined : parseRoleMap(e.OIDC_ROLES);
  } catch (error) {
    issues.push(`OIDC_ROLES ${(error as Error).message}`);
  }
  if (!e.OIDC_CLIENT_ID || !e.OIDC_CLIENT_SECRET || !roles) {
    return { oidc: undefined, sessionSecret: e.CONSOLE_SESSION_SECRET, maskedRoles: e.CONSOLE_MASKED_ROLES };
  }
  return {
    oidc: {
      issuer: e.OIDC_ISSUER,
      clientId: e.OIDC_CLIENT_ID,
      clientSecret: e.OIDC_CLIENT_SECRET,
      redirectUrl: e.OIDC_REDIRECT_URL,
      roleClaim: e.OIDC_ROLE_CLAIM,
      roles,
      scopes: e.OIDC_SCOPES,
      name: e.OIDC_PROVIDER_NAME,
    },
    sessionSecret: e.CONSOLE_SESSION_SECRET,
    maskedRoles: e.CONSOLE_MASKED_ROLES,
  };
}

/** The console's sign-in as it is safe to log: the provider and the role mapping, never a secret. */
export function describeConsoleConfig(config: ConsoleConfig): Record<string, unknown> {
  return {
    oidc: config.oidc
      ? { issuer: config.oidc.issuer, clientId: config.oidc.clientId, roles: config.oidc.roles.entries }
      : 'off',
    sessionSecret: config.sessionSecret ? 'set' : 'derived',
    maskedRoles: config.maskedRoles,
  };
}
