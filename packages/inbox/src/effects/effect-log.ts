/**
 * An effect's logger (`context.log`: its lines carry the event's provider and id and the effect's name), made when
 * the effect first uses it. pino's `child()` copies the logger and serialises its bindings when it is called; most
 * effects of most events write no line, and a batch of 50 checkout events would otherwise build 150 of them.
 */
import type { Logger } from 'pino';
import { bindings, type Task } from './task.ts';

export function effectLogger(parent: Logger, task: Task): Logger {
  let child: Logger | undefined;
  const logger = (): Logger => (child ??= parent.child(bindings(task)));
  // An empty target: every property, method or setting, is the child's, made on first use.
  return new Proxy({} as Logger, {
    get(_target, property) {
      const real = logger();
      const value: unknown = Reflect.get(real, property, real);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(real) : value;
    },
    set: (_target, property, value) => Reflect.set(logger(), property, value),
    has: (_target, property) => Reflect.has(logger(), property),
    getPrototypeOf: () => Reflect.getPrototypeOf(logger()),
  });
}
