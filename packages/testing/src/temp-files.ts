import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export interface TempFiles {
  /** Writes `text` as `name` in a directory of its own (so relative paths beside it resolve) and returns its path. */
  write(name: string, text: string): string;
}

/**
 * Files a test file writes for the code under test (a sources file, a secret file, a payload), under one
 * `<prefix>XXXXXX` directory in the system's temp folder that is removed after the test file's tests. Call it at
 * the top level of a test file or of a module a test file imports: vitest evaluates both once per test file, so
 * the removal is registered on that file.
 */
export function useTempFiles(prefix: string): TempFiles {
  const root = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return {
    write(name, text) {
      const path = join(mkdtempSync(join(root, 'f-')), name);
      writeFileSync(path, text);
      return path;
    },
  };
}
