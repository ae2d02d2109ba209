import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export interface TempFiles {
  /** Writes `text` as `name` in a directory of its own (so relative paths beside it resolve) and returns its path. */
  write(name: string, text: string): string;
}

/** The directory of each `useTempFiles` in this process, while it exists. */
const roots = new Map<string, string | undefined>();
let nextId = 0;

/**
 * Files a test file writes for the code under test (a sources file, a secret file, a payload), under one
 * `<prefix>XXXXXX` directory in the system's temp folder, made on the first write and removed after the test
 * file's tests. A module shared by several test files may call it at its top level: test files share a worker's
 * modules (vitest's `isolate: false`), so that module runs once per worker, and `removeTempFiles` (run after each
 * test file by the vitest configs' setup file) removes what any of them wrote.
 */
export function useTempFiles(prefix: string): TempFiles {
  const id = String(nextId++);
  roots.set(id, undefined);
  afterAll(removeTempFiles);
  return {
    write(name, text) {
      let root = roots.get(id);
      if (root === undefined) {
        root = mkdtempSync(join(tmpdir(), prefix));
        roots.set(id, root);
      }
      const path = join(mkdtempSync(join(root, 'f-')), name);
      writeFileSync(path, text);
      return path;
    },
  };
}

/** Removes every directory `useTempFiles` made; a later write makes its directory again. */
export function removeTempFiles(): void {
  for (const [id, root] of roots) {
    if (root === undefined) continue;
    rmSync(root, { recursive: true, force: true });
    roots.set(id, undefined);
  }
}
