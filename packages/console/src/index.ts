export { createConsole, type Console, type ConsoleOptions } from './app.ts';
export { CONSOLE_ERRORS, ConsoleError, type ConsoleErrorCode } from './errors.ts';
export { startOperationsRunner, type OperationsRunner, type RunnerOptions } from './operations/runner.ts';
