// The published packages' manifests, as `pnpm pack` / `pnpm publish` write them into the tarball.
//
// A library named in a package's `peerDependencies` (stripe, drizzle-orm, pg, pg-boss, pino: their types are
// in its public API, so there must be one copy, the team's) is in its `dependencies` too: inside this workspace
// the apps run the packages from their sources through pnpm's links, and a linked package resolves its imports
// from its own directory, so it needs its own copy there (also in the Docker images, installed with --prod). The
// published manifest keeps only the peer entry.
module.exports = {
  hooks: {
    beforePacking(pkg) {
      for (const name of Object.keys(pkg.peerDependencies ?? {})) delete pkg.dependencies?.[name];
      return pkg;
    },
  },
};
