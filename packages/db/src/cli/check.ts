/**
 * Fails when the Drizzle schema and the committed migrations disagree: `drizzle-kit generate` into a scratch
 * copy of the migrations folder must produce nothing new, and `drizzle-kit check` must pass.
 *
 *   node src/cli/check.ts [--schema src/schema.ts] [--out ../../drizzle/inbox]
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    schema: { type: 'string', default: path.join(packageDir, 'src/schema.ts') },
    out: { type: 'string', default: path.join(packageDir, '../../drizzle/inbox') },
  },
});
const schema = path.resolve(values.schema);
const out = path.resolve(values.out);
const drizzleKit = path.join(packageDir, 'node_modules/.bin/drizzle-kit');

// drizzle-kit reads folder paths relative to its working directory (it prefixes './'), so pass them so.
const rel = (p: string) => path.relative(packageDir, p) || '.';

function drizzle(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(drizzleKit, args, { cwd: packageDir, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Why the schema and the migrations disagree, or undefined when they agree; `scratch` is a folder it may fill. */
async function disagreement(scratch: string): Promise<string | undefined> {
  await cp(out, scratch, { recursive: true });
  const before = new Set(await readdir(scratch));
  const generated = drizzle([
    'generate',
    '--dialect',
    'postgresql',
    '--schema',
    rel(schema),
    '--out',
    rel(scratch),
  ]);
  if (generated.status !== 0) return `drizzle-kit generate failed:\n${generated.output}`;
  const added = (await readdir(scratch)).filter((file) => file.endsWith('.sql') && !before.has(file));
  if (added.length > 0) {
    const files = await Promise.all(
      added.map(
        async (file) =>
          `\n--- ${file} (would be generated)\n${await readFile(path.join(scratch, file), 'utf8')}`,
      ),
    );
    return `The schema has changes that no migration covers. Run \`pnpm db:generate\` and commit the result.\n${files.join('\n')}`;
  }
  const checked = drizzle(['check', '--dialect', 'postgresql', '--out', rel(out)]);
  if (checked.status !== 0) return `drizzle-kit check failed:\n${checked.output}`;
  return undefined;
}

// The scratch folder is removed before exiting, whatever the verdict.
const scratch = await mkdtemp(path.join(os.tmpdir(), 'db-check-'));
let failure: string | undefined;
try {
  failure = await disagreement(scratch);
} finally {
  await rm(scratch, { recursive: true, force: true });
}
if (failure !== undefined) {
  console.error(failure);
  process.exit(1);
}
console.log('schema and migrations agree');
