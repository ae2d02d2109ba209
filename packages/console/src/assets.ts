import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Hono } from 'hono';

const require = createRequire(import.meta.url);

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
/** A file of an npm package this one depends on. */
const dependency = (specifier: string) => require.resolve(specifier);
/** A file of this package's `assets/` folder. */
const own = (name: string) => new URL(`./assets/${name}`, import.meta.url);
const asset = (file: string | URL, type: string) => ({ body: readFileSync(file, 'utf8'), type });

// Read once at start: a few small files, served from memory, cached by the browser for an hour.
const ASSETS: Record<string, { body: string; type: string }> = {
  'htmx.min.js': asset(dependency('htmx.org/dist/htmx.min.js'), JS),
  // uPlot (about 50 kB): the overview's charts.
  'uplot.min.js': asset(dependency('uplot/dist/uPlot.iife.min.js'), JS),
  'uplot.min.css': asset(dependency('uplot/dist/uPlot.min.css'), CSS),
  'overview.js': asset(own('overview.js'), JS),
  'json-viewer.js': asset(own('json-viewer.js'), JS),
  'selection.js': asset(own('selection.js'), JS),
  'favicon.svg': asset(own('favicon.svg'), 'image/svg+xml'),
  'console.css': asset(own('console.css'), CSS),
};

/** The console's static files, from this package and from the htmx and uplot npm packages: nothing from a CDN. */
export function assetRoutes(): Hono {
  const assets = new Hono();
  assets.get('/assets/:name', (c) => {
    const name = c.req.param('name');
    // Own names only: `constructor`, `toString` and `__proto__` are not files.
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) return c.text('no such asset', 404);
    return c.body(asset.body, 200, { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=3600' });
  });
  return assets;
}
