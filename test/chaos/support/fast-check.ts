/**
 * fast-check is a devDependency of packages/inbox only, so the root cannot import it by name; it is reached
 * through that package's node_modules until it is added to the root devDependencies (then: `from 'fast-check'`).
 */
export * as fc from '../../../packages/inbox/node_modules/fast-check/lib/fast-check.js';
