import { describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/effects/connection-errors.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isConnectionError', () => {
  it('recognises a connection that failed, never came or stopped answering', () => {
    for (const error of [
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('read ECONNRESET', 'ECONNRESET'),
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('the database system is starting up', '57P03'),
      withCode('the database system is shutting down', '57P03'),
      withCode('connection failure', '08006'),
      withCode('sorry, too many clients already', '53300'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('Query read timeout'),
      new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') }),
      new Error('wrapped', { cause: withCode('read ECONNRESET', 'ECONNRESET') }),
      new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], 'connect failed'),
    ]) {
      expect(isConnectionError(error), error.message).toBe(true);
    }
  });

  it('leaves statement errors and our own shutdown alone', () => {
    for (const error of [
      withCode('duplicate key value violates unique constraint', '23505'),
      withCode('mark refused by test trigger', 'P0001'),
      withCode('canceling statement due to statement timeout', '57014'),
      withCode('deadlock detected', '40P01'),
      new Error('Cannot use a pool after calling end on the pool'),
      new Error('Client was closed and is not queryable'),
      new Error('something else'),
    ]) {
      expect(isConnectionError(error), error.message).toBe(false);
    }
    expect(isConnectionError(undefined)).toBe(false);
    expect(isConnectionError('ECONNRESET')).toBe(false);
  });
});
