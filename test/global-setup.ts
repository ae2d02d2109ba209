import { setupWith } from '@webhook-inbox/testing/global-setup';
import { EXAMPLE_MIGRATIONS } from '@webhook-inbox/worker/migrations';
import type { TestProject } from 'vitest/node';

/** The tests' template database carries the example worker's tables besides the inbox's. */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return setupWith(project, { also: [EXAMPLE_MIGRATIONS] });
}
