import { isRole, ROLES, type Role } from '@webhook-inbox/operator/access/roles';

/**
 * Which console role a claim value of the identity provider gives (`OIDC_ROLES`): `platform-admins=admin,
 * oncall=operator,*=viewer`. A user gets the highest role any of their values maps to; `*` is every signed-in user
 * of the provider; a user no entry matches gets no role and is refused.
 */
export interface RoleMap {
  /** The role for these claim values, or undefined when none maps. */
  roleFor(values: readonly string[]): Role | undefined;
  /** The entries as given, for the configuration's log line. */
  readonly entries: readonly string[];
}

/**
 * Parses `value=role` pairs separated by commas; throws a `TypeError` naming the first entry that is not one, or a
 * role that does not exist.
 */
export function parseRoleMap(list: string): RoleMap {
  const map = new Map<string, Role>();
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const at = entry.lastIndexOf('=');
    const value = entry.slice(0, at).trim();
    const role = entry.slice(at + 1).trim();
    if (at <= 0 || !value) throw new TypeError(`"${entry.slice(0, 60)}" is not claim-value=role`);
    if (!isRole(role)) {
      throw new TypeError(`"${entry.slice(0, 60)}": the role must be one of ${ROLES.join(', ')}`);
    }
    map.set(value, role);
  }
  if (map.size === 0)
    throw new TypeError('maps no claim value to a role (e.g. platform-admins=admin,*=viewer)');
  return {
    entries,
    roleFor(values) {
      const granted = [...values, '*'].map((value) => map.get(value)).filter((role) => role !== undefined);
      return granted.sort((a, b) => ROLES.indexOf(b) - ROLES.indexOf(a))[0];
    },
  };
}

/** A claim's values as strings: a list (`groups`), a single value (`role`), or none. */
export function claimValues(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  if (Array.isArray(claim)) return claim.filter((value): value is string => typeof value === 'string');
  return [];
}
