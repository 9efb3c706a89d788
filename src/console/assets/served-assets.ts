import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONSOLE_SCRIPT } from './console-script';
import { CONSOLE_STYLE } from './console-style';
import { ROBOT_VIEWER_SCRIPT } from './robot-viewer-script';

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
for (const [name, source] of Object.entries(SOURCES)) byName.set(name, serve(name, source.type, Buffer.from(source.body())));

/** The URL a page links to for one of the console's files, e.g. assetUrl('console.js'). */
export function assetUrl(name: keyof typeof SOURCES & string): string {
  const url = byName.get(name);
  if (!url) throw new Error(`no console asset named ${name}`);
  return url;
}

const JS = 'application/javascript; charset=utf-8';

/**
 * three.js and urdf-loader ship ES modules only, importing each other by bare names
 * ('three', 'three/addons/...'). A page cannot map those names without an import map, which
 * would be an inline script (the CSP allows none); so each module of the robot viewer's graph
 * is served under its own hashed name with its import specifiers rewritten to the hashed
 * names of what it imports (dependencies first, so a changed dependency renames its
 * importers too). Only the `import`/`export` statements at the start of a line are
 * rewritten, never text in comments or strings.
 */
// three's package exports no package.json: its main file is build/three.cjs.
const THREE = path.resolve(path.dirname(require.resolve('three')), '..');
const URDF_LOADER = path.dirname(require.resolve('urdf-loader/package.json'));
const IMPORT = /^(import|export)\b([^;'"`]*?)(['"])([^'"]+)\3/gm;

function resolveSpecifier(specifier: string, from: string): string {
  if (specifier === 'three') return path.join(THREE, 'build', 'three.module.js');
  if (specifier.startsWith('three/addons/')) return path.join(THREE, 'examples', 'jsm', specifier.slice('three/addons/'.length));
  if (specifier.startsWith('three/examples/jsm/')) return path.join(THREE, specifier.slice('three/'.length));
  if (specifier === 'urdf-loader') return path.join(URDF_LOADER, 'src', 'URDFLoader.js');
  if (specifier.startsWith('./') || specifier.startsWith('../')) return path.resolve(path.dirname(from), specifier);
  throw new Error(`the robot viewer's module ${from} imports "${specifier}", which is not served`);
}

/** Serves one module and what it imports; answers its URL. `source` is a file's path, or the viewer's own text. */
function serveModule(file: string, seen: Map<string, string>, text?: string): string {
  const known = seen.get(file);
  if (known) return known;
  const source = text ?? fs.readFileSync(file, 'utf8');
  const body = source.replace(IMPORT, (_all, keyword: string, between: string, quote: string, specifier: string) => {
    return `${keyword}${between}${quote}${serveModule(resolveSpecifier(specifier, file), seen)}${quote}`;
  });
  const url = serve(path.basename(file), JS, Buffer.from(body));
  seen.set(file, url);
  return url;
}

function serve(name: string, type: string, body: Buffer): string {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
  const dot = name.indexOf('.');
  const served = dot < 0 ? `${name}.${hash}` : `${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
  byServedName.set(served, { type, body });
  return `/console/assets/${served}`;
}

/** The robot viewer (a module script importing three.js and urdf-loader), served with its module graph. */
export const ROBOT_VIEWER_URL = serveModule(path.join(__dirname, 'robot-viewer.js'), new Map(), ROBOT_VIEWER_SCRIPT);

/** The file behind a served (hashed) name, if any. */
export function servedAsset(servedName: string): ServedAsset | undefined {
  return byServedName.get(servedName);
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';
