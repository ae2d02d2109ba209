import { loadSourcesFile, SourcesFileError, type SourceDefinition } from '@webhook-inbox/providers';

/** The sources the file declares; each problem in it becomes an issue naming the file, the source and the field. */
export function readSources(path: string | undefined, issues: string[]): SourceDefinition[] {
  if (path === undefined) return [];
  try {
    return loadSourcesFile(path);
  } catch (error) {
    if (!(error instanceof SourcesFileError)) throw error;
    issues.push(...error.issues.map((issue) => `WEBHOOK_SOURCES_FILE (${path}): ${issue}`));
    return [];
  }
}
