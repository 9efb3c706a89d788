import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONSOLE_SCRIPT } from './console-script';
import { CONSOLE_STYLE } from './console-style';

/** uPlot's own files, from node_modules: nothing is fetched from a CDN. */
const UPLOT = path.join(path.dirname(require.resolve('uplot/package.json')), 'dist');

export interface ServedAsset {
  type: string;
  body: Buffer;
}

const SOURCES: Record<string, { type: string; body: () => string | Buffer }> = {
  'console.js': { type: 'application/javascript; charset=utf-8', body: () => CONSOLE_SCRIPT },
  'console.css': { type: 'text/css; charset=utf-8', body: () => CONSOLE_STYLE },
  'uPlot.iife.min.js': { type: 'application/javascript; charset=utf-8', body: () => fs.readFileSync(path.join(UPLOT, 'uPlot.iife.min.js')) },
  'uPlot.min.css': { type: 'text/css; charset=utf-8', body: () => fs.readFileSync(path.join(UPLOT, 'uPlot.min.css')) },
};

/**
 * Each file served under a name carrying a hash of its bytes (`console.3f2a9c41d0.js`), so a
 * browser may keep it for a year without asking (`immutable`): a new release changes the name
 * the pages link to, never the bytes behind a name.
 */
const byName = new Map<string, string>();
const byServedName = new Map<string, ServedAsset>();
for (const [name, source] of Object.entries(SOURCES)) {
  const body = Buffer.from(source.body());
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
  const dot = name.indexOf('.');
  const served = `${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
  byName.set(name, `/console/assets/${served}`);
  byServedName.set(served, { type: source.type, body });
}

/** The URL a page links to for one of the console's files, e.g. assetUrl('console.js'). */
export function assetUrl(name: keyof typeof SOURCES & string): string {
  const url = byName.get(name);
  if (!url) throw new Error(`no console asset named ${name}`);
  return url;
}

/** The file behind a served (hashed) name, if any. */
export function servedAsset(servedName: string): ServedAsset | undefined {
  return byServedName.get(servedName);
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';
