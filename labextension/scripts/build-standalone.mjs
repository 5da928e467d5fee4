#!/usr/bin/env node
/**
 * Bundle src/hosts/standalone.ts into ../placeviz/inspector/static/placeviz-inspector.js: one
 * minified IIFE with everything inlined (plotly.js included, evaluated only when a panel first
 * needs it) and the stylesheet (style/index.css with its @imports) as a string, so the page that
 * Trace.to_html writes needs no network at all.
 */
import { build } from 'esbuild';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const extPath = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = resolve(extPath, '../placeviz/inspector/static/placeviz-inspector.js');

/** A stylesheet with its relative @imports inlined (each file once). */
function inlineCss(file, seen = new Set()) {
  if (seen.has(file)) {
    return '';
  }
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  return text.replace(
    /@import\s+(?:url\()?\s*['"]?([^'")\s]+)['"]?\s*\)?\s*;/g,
    (statement, target) => {
      if (/^[a-z]+:/i.test(target) || target.startsWith('//')) {
        throw new Error(`${file}: the standalone bundle cannot load ${target} (no network)`);
      }
      return inlineCss(resolve(dirname(file), target), seen);
    },
  );
}

const css = inlineCss(join(extPath, 'style', 'index.css'));

mkdirSync(dirname(outfile), { recursive: true });
await build({
  entryPoints: [join(extPath, 'src', 'hosts', 'standalone.ts')],
  outfile,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2020'],
  minify: true,
  legalComments: 'none',
  define: { __PLACEVIZ_CSS__: JSON.stringify(css) },
  logLevel: 'warning',
});

const size = statSync(outfile).size;
console.log(`build-standalone: ${outfile} (${(size / 1024).toFixed(0)} KiB)`);
