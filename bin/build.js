#!/usr/bin/env node
'use strict';
/**
 * Compiles src/ and projections/ into dist/ with TypeScript (and, into dist/clients/typescript/src,
 * the TypeScript SDK's sources the operator CLI imports).
 *   node bin/build.js           always (npm's prepare); skipped when TypeScript is not
 *                               installed (npm install --omit=dev, the Docker runtime stage)
 *   node bin/build.js --stale   only when dist/ is missing or older than a source (npm start)
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const entry = path.join(root, 'dist', 'src', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const item of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, item.name);
    if (item.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (/\.(ts|sql)$/.test(item.name)) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

const builtAt = fs.existsSync(entry) ? fs.statSync(entry).mtimeMs : 0;
if (process.argv.includes('--stale')) {
  // clients/typescript/src: the TypeScript SDK's sources the operator CLI imports (its uploader, its generated types).
  const sources = Math.max(
    newestSource(path.join(root, 'src')),
    newestSource(path.join(root, 'projections')),
    newestSource(path.join(root, 'clients', 'typescript', 'src')),
    fs.statSync(path.join(root, 'tsconfig.build.json')).mtimeMs,
  );
  if (builtAt >= sources) process.exit(0);
  console.error(builtAt ? 'dist/ is older than the sources: building' : 'no dist/ yet: building');
}

let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
} catch {
  if (builtAt) process.exit(0); // a production install runs what it was built with
  if (!process.argv.includes('--stale')) process.exit(0); // nothing to build with yet: npm start says so
  console.error('dist/ is missing and TypeScript is not installed: run "npm install" (with dev dependencies) first');
  process.exit(1);
}
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
// Touch the entry point so a build that changed nothing still counts as fresh.
if (result.status === 0 && fs.existsSync(entry)) fs.utimesSync(entry, new Date(), new Date());
process.exit(result.status ?? 1);
