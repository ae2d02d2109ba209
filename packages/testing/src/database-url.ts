/** The same server and credentials as `url`, another database. */
export function databaseUrl(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/**
 * The role the tests' applications connect as (the application's role of a deployment, `grantAppRole`): it owns
 * nothing. The template database grants it what it needs, so every test database does.
 */
export const TEST_APP_ROLE = { name: 'webhook_inbox_test_app', password: 'webhook_inbox_test_app' } as const;

/** The same server and database as `url`, connecting as the tests' application role. */
export function appRoleUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = TEST_APP_ROLE.name;
  parsed.password = TEST_APP_ROLE.password;
  return parsed.toString();
}
