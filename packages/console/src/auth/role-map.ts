import { GROUP_NAME_RULE, isGroupName } from '@webhook-inbox/inbox/queue';
import { isRole, ROLES, type Role } from '@webhook-inbox/operator/access/roles';

/** What a sign-in is granted: a role, and the consumer groups it is limited to (`null`: every group). */
export interface Grant {
  role: Role;
  groups: readonly string[] | null;
}

/**
 * Which console role a claim value of the identity provider gives (`OIDC_ROLES`): `platform-admins=admin,
 * oncall=operator,*=viewer`. A user gets the highest role any of their values maps to; `*` is every signed-in user
 * of the provider; a user no entry matches gets no role and is refused. A role may be limited to consumer groups
 * (`billing-oncall=operator@billing`, several joined by `+`: `operator@billing+shipping`): the session then sees
 * and replays only those groups' events. Of the entries that give the highest role, one without groups makes the
 * session unlimited; otherwise it gets the union of their groups.
 */
export interface RoleMap {
  /** The role for these claim values, or undefined when none maps. */
  roleFor(values: readonly string[]): Role | undefined;
  /** The role and its groups for these claim values, or undefined when none maps. */
  grantFor(values: readonly string[]): Grant | undefined;
  /** The entries as given, for the configuration's log line. */
  readonly entries: readonly string[];
}

/**
 * Parses `value=role` pairs separated by commas; throws a `TypeError` naming the first entry that is not one, or a
 * role that does not exist.
 */
export function parseRoleMap(list: string): RoleMap {
  const map = new Map<string, Grant>();
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const at = entry.lastIndexOf('=');
    const value = entry.slice(0, at).trim();
    const [role = '', groupList] = entry
      .slice(at + 1)
      .trim()
      .split('@');
    if (at <= 0 || !value) throw new TypeError(`"${entry.slice(0, 60)}" is not claim-value=role`);
    if (!isRole(role)) {
      throw new TypeError(`"${entry.slice(0, 60)}": the role must be one of ${ROLES.join(', ')}`);
    }
    const groups = groupList === undefined ? null : groupList.split('+').map((group) => group.trim());
    if (groups?.some((group) => !isGroupName(group))) {
      throw new TypeError(`"${entry.slice(0, 60)}": each consumer group after @ is ${GROUP_NAME_RULE}`);
    }
    map.set(value, { role, groups });
  }
  if (map.size === 0)
    throw new TypeError('maps no claim value to a role (e.g. platform-admins=admin,*=viewer)');
  const grantFor = (values: readonly string[]): Grant | undefined => {
    const granted = [...values, '*'].map((value) => map.get(value)).filter((grant) => grant !== undefined);
    const role = granted.map((grant) => grant.role).sort((a, b) => ROLES.indexOf(b) - ROLES.indexOf(a))[0];
    if (role === undefined) return undefined;
    const highest = granted.filter((grant) => grant.role === role);
    if (highest.some((grant) => grant.groups === null)) return { role, groups: null };
    return { role, groups: [...new Set(highest.flatMap((grant) => grant.groups ?? []))].sort() };
  };
  return { entries, grantFor, roleFor: (values) => grantFor(values)?.role };
}

/** A claim's values as strings: a list (`groups`), a single value (`role`), or none. */
export function claimValues(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  if (Array.isArray(claim)) return claim.filter((value): value is string => typeof value === 'string');
  return [];
}
