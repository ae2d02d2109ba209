import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Hono } from 'hono';

const require = createRequire(import.meta.url);

// Read once at start: a few small files, served from memory, cached by the browser for an hour.
const ASSETS: Record<string, { body: string; type: string }> = {
  'htmx.min.js': {
    body: readFileSync(require.resolve('htmx.org/dist/htmx.min.js'), 'utf8'),
    type: 'text/javascript; charset=utf-8',
  },
  // uPlot (about 50 kB): the overview's charts.
  'uplot.min.js': {
    body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    type: 'text/javascript; charset=utf-8',
  },
  'uplot.min.css': {
    body: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
    type: 'text/css; charset=utf-8',
  },
  'overview.js': {
    body: readFileSync(new URL('./assets/overview.js', import.meta.url), 'utf8'),
    type: 'text/javascript; charset=utf-8',
  },
  'json-viewer.js': {
    body: readFileSync(new URL('./assets/json-viewer.js', import.meta.url), 'utf8'),
    type: 'text/javascript; charset=utf-8',
  },
  'selection.js': {
    body: readFileSync(new URL('./assets/selection.js', import.meta.url), 'utf8'),
    type: 'text/javascript; charset=utf-8',
  },
  'favicon.svg': {
    body: readFileSync(new URL('./assets/favicon.svg', import.meta.url), 'utf8'),
    type: 'image/svg+xml',
  },
  'console.css': {
    body: readFileSync(new URL('./assets/console.css', import.meta.url), 'utf8'),
    type: 'text/css; charset=utf-8',
  },
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
