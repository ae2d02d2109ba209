/**
 * The compiler's errors in the packages' own declaration files, as a team's project sees them without
 * `skipLibCheck`: every entry point given, strict, and only the diagnostics whose file is one of the packages'
 * (a library's own declarations, drizzle-orm's for one, are not ours to answer for). An import of a package the
 * project has not installed (an optional peer) is such an error.
 */
import ts from 'typescript';

export function declarationErrors(entryPoints: string[], ownPackages: RegExp): string[] {
  const program = ts.createProgram(entryPoints, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    types: ['node'],
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipLibCheck: false,
  });
  const errors: string[] = [];
  for (const source of program.getSourceFiles()) {
    if (!ownPackages.test(source.fileName)) continue;
    for (const diagnostic of [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ]) {
      const where = source.fileName.replace(/.*node_modules\//, '');
      errors.push(`${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`);
    }
  }
  return errors;
}
