export { createConsole, type Console, type ConsoleOptions } from './app.ts';
export { CONSOLE_ERRORS, ConsoleError, type ConsoleErrorCode } from './errors.ts';
export { startOperationsRunner, type OperationsRunner, type RunnerOptions } from './operations/runner.ts';
export type { OidcOptions } from './auth/oidc.ts';
export { parseRoleMap, type RoleMap } from './auth/role-map.ts';
