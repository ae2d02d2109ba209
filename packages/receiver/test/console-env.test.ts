import { describe, expect, it } from 'vitest';
import { describeConfig, parseConfig } from '../src/config/env.ts';
import { configIssues } from './helpers.ts';

const DB = 'postgres://localhost/inbox';
const OIDC = {
  OIDC_ISSUER: 'https://login.example.com/',
  OIDC_CLIENT_ID: 'inbox-console',
  OIDC_CLIENT_SECRET: 'a-client-secret-from-the-provider',
  OIDC_ROLES: 'platform-admins=admin, oncall=operator, *=viewer',
};

describe('the console sign-in configuration (OIDC_*)', () => {
  it('reads the provider, the role mapping and its defaults, and logs no secret', () => {
    const config = parseConfig({ DATABASE_URL: DB, ...OIDC });
    expect(config.console.oidc).toMatchObject({
      issuer: 'https://login.example.com/',
      clientId: 'inbox-console',
      roleClaim: 'groups',
      scopes: 'openid email profile',
    });
    expect(config.console.oidc?.roles.roleFor(['oncall', 'staff'])).toBe('operator');
    expect(config.console.oidc?.roles.roleFor(['someone'])).toBe('viewer');
    const logged = JSON.stringify(describeConfig(config));
    expect(logged).toContain('"issuer":"https://login.example.com/"');
    expect(logged).not.toContain('a-client-secret-from-the-provider');
    expect(parseConfig({ DATABASE_URL: DB }).console.oidc).toBeUndefined();
  });

  it('reads the masked roles (default viewer, none for no role) and a role limited to consumer groups', () => {
    expect(parseConfig({ DATABASE_URL: DB }).console.maskedRoles).toEqual(['viewer']);
    expect(
      parseConfig({ DATABASE_URL: DB, CONSOLE_MASKED_ROLES: 'viewer, operator' }).console.maskedRoles,
    ).toEqual(['viewer', 'operator']);
    expect(parseConfig({ DATABASE_URL: DB, CONSOLE_MASKED_ROLES: 'none' }).console.maskedRoles).toEqual([]);
    expect(configIssues(DB, { CONSOLE_MASKED_ROLES: 'viewer,root' })).toEqual([
      'CONSOLE_MASKED_ROLES must be roles (viewer, operator, admin) separated by commas, or none',
    ]);
    const limited = parseConfig({ DATABASE_URL: DB, ...OIDC, OIDC_ROLES: 'billing-oncall=operator@billing' });
    expect(limited.console.oidc?.roles.grantFor(['billing-oncall'])).toEqual({
      role: 'operator',
      groups: ['billing'],
    });
  });

  it('names every wrong variable', () => {
    expect(configIssues(DB, { OIDC_ISSUER: 'http://login.example.com/' })).toEqual([
      'OIDC_ISSUER must be an https:// URL (plain http only on this machine: localhost, 127.0.0.1, [::1])',
    ]);
    expect(configIssues(DB, { OIDC_ISSUER: 'https://login.example.com/' })).toEqual([
      'OIDC_CLIENT_ID is required when OIDC_ISSUER is set',
      'OIDC_CLIENT_SECRET is required when OIDC_ISSUER is set',
      'OIDC_ROLES is required when OIDC_ISSUER is set',
    ]);
    expect(configIssues(DB, { ...OIDC, OIDC_ROLES: 'platform-admins=root' })).toEqual([
      'OIDC_ROLES "platform-admins=root": the role must be one of viewer, operator, admin',
    ]);
    expect(configIssues(DB, { OIDC_CLIENT_ID: 'x' })).toEqual([
      'OIDC_CLIENT_ID is set but OIDC_ISSUER is not',
    ]);
    expect(configIssues(DB, { CONSOLE_SESSION_SECRET: 'short' })).toEqual([
      'CONSOLE_SESSION_SECRET must be at least 32 characters',
    ]);
  });
});
