// Runs in each test file before its tests (vitest's setupFiles): with `isolate: false` a module shared by test
// files runs once per worker, so what it registers after a file's tests is registered on the first file only.
import { removeTempFiles } from '@webhook-inbox/testing';
import { afterAll } from 'vitest';

afterAll(removeTempFiles);
