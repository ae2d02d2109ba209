import type { Statement } from './statement.ts';

/**
 * What each effect transaction sets for itself behind a transaction-mode pooler, where the connection is no
 * session to configure at start: the statement deadline, how long it may sit idle before the server ends it
 * (0: never; see inbox.ts), and commits that do not wait for the WAL flush (the job's completion flushes them).
 */
export function transactionSettings(statementTimeoutMs: number, idleTimeoutMs = 0): Statement {
  return {
    text: `
      select set_config('statement_timeout', $1, true), set_config('synchronous_commit', 'off', true),
             set_config('idle_in_transaction_session_timeout', $2, true)`,
    values: [String(statementTimeoutMs), String(idleTimeoutMs)],
  };
}
