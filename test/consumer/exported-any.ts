/**
 * Where `any` reaches a package's public types: every export of every entry point, its declared type walked
 * through the types the packages declare themselves (properties, call signatures, type arguments), and at the
 * edge of a library's type (Hono's, pg's), that type's arguments only. So `MiddlewareHandler` (Hono's default
 * `MiddlewareHandler<any>`) in an exported interface is found, Hono's own internals are not walked.
 */
import ts from 'typescript';

export function exportedAny(entryPoints: string[], ownPackages: RegExp): string[] {
  const program = ts.createProgram(entryPoints, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const found = new Set<string>();
  // Per export, so that each export a shared type leaks through is named.
  let seen = new Set<ts.Type>();

  const own = (type: ts.Type): boolean =>
    ((type.aliasSymbol ?? type.getSymbol())?.getDeclarations() ?? []).some((declaration) =>
      ownPackages.test(declaration.getSourceFile().fileName),
    );

  function walk(type: ts.Type, where: string, depth: number): void {
    if (type.flags & ts.TypeFlags.Any) {
      found.add(where);
      return;
    }
    if (seen.has(type) || depth > 12) return;
    seen.add(type);
    const args = [
      ...(type.aliasTypeArguments ?? []),
      ...((type.flags & ts.TypeFlags.Object) !== 0 &&
      ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) !== 0
        ? checker.getTypeArguments(type as ts.TypeReference)
        : []),
    ];
    args.forEach((arg, i) => walk(arg, `${where}<${i}>`, depth + 1));
    if (type.isUnionOrIntersection()) {
      type.types.forEach((member) => walk(member, where, depth + 1));
      return;
    }
    // A library's type: its signatures (Hono's `MiddlewareHandler` is `(c: Context<any>) => ...`), not its members.
    if (own(type)) {
      for (const property of type.getProperties()) {
        const declaration = property.valueDeclaration ?? property.declarations?.[0];
        // Members the packages declare, not those inherited from a library's class (Error's prepareStackTrace).
        if (!declaration || !ownPackages.test(declaration.getSourceFile().fileName)) continue;
        walk(
          checker.getTypeOfSymbolAtLocation(property, declaration),
          `${where}.${property.name}`,
          depth + 1,
        );
      }
    }
    for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
      for (const parameter of signature.getParameters()) {
        const declaration = parameter.valueDeclaration ?? parameter.declarations?.[0];
        if (!declaration) continue;
        walk(
          checker.getTypeOfSymbolAtLocation(parameter, declaration),
          `${where}(${parameter.name})`,
          depth + 1,
        );
      }
      walk(signature.getReturnType(), `${where}()`, depth + 1);
    }
  }

  for (const entry of entryPoints) {
    const source = program.getSourceFile(entry);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no module at ${entry}`);
    for (const symbol of checker.getExportsOfModule(module)) {
      seen = new Set();
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const declaration = target.valueDeclaration ?? target.declarations?.[0];
      if (!declaration) continue;
      const type =
        target.flags & ts.SymbolFlags.Value
          ? checker.getTypeOfSymbolAtLocation(target, declaration)
          : checker.getDeclaredTypeOfSymbol(target);
      walk(type, `${entry.replace(/.*node_modules\//, '')}: ${symbol.name}`, 0);
    }
  }
  return [...found].sort();
}
