#!/usr/bin/env node
'use strict';
/**
 * The OpenAPI document the app generates, for tools that need it as a file. Builds dist/
 * if stale, boots the app on a throwaway PGlite directory without listening
 * (src/openapi/write-document.ts), writes the document to a temp file, then:
 *   node bin/openapi.js lint        npm run lint:openapi: Redocly CLI against redocly.yaml,
 *                                   and the generated types, the TypeScript SDK's
 *                                   clients/typescript/src/generated/api.ts (which the operator
 *                                   CLI in src/cli imports too), must match the document
 *   node bin/openapi.js gen-types   npm run gen:api-types: regenerates them
 *   node bin/openapi.js stamp       records the document's fingerprint in CHANGELOG.md, once the
 *                                   change is described there (lint fails until it is)
 * Exits non-zero on any problem.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');
/**
 * The one file of generated types: the TypeScript SDK's (clients/typescript is a package of its
 * own and imports nothing from src/; the operator CLI imports it from there, docs/decisions/0075).
 */
const API_TYPES = path.join('clients', 'typescript', 'src', 'generated', 'api.ts');
const CHANGELOG = path.join(root, 'CHANGELOG.md');
const STAMP = /<!-- openapi-sha256: (\w+) -->/;
// No telemetry or update checks from CI runs.
const QUIET = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

/** Runs a step; a failed step ends the script (after the temp directory is removed). */
function run(script, args, env = {}) {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) throw Object.assign(new Error(`${path.basename(script)} failed`), { status: result.status ?? 1 });
}

const redocly = (...args) => run(require.resolve('@redocly/cli/bin/cli.js'), args, QUIET);
const openapiTypescript = (...args) => run(path.join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), args, QUIET);

const command = process.argv[2];
if (command !== 'lint' && command !== 'gen-types' && command !== 'stamp') {
  console.error('usage: node bin/openapi.js lint|gen-types|stamp');
  process.exit(2);
}

/** Spec section 9: an API change is announced in CHANGELOG.md; its stamp is the document it describes. */
function checkChangelog(file) {
  const fingerprint = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  const stamped = STAMP.exec(fs.readFileSync(CHANGELOG, 'utf8'))?.[1];
  if (command === 'stamp') {
    fs.writeFileSync(CHANGELOG, fs.readFileSync(CHANGELOG, 'utf8').replace(STAMP, `<!-- openapi-sha256: ${fingerprint} -->`));
    console.log(`CHANGELOG.md stamped with the OpenAPI document ${fingerprint.slice(0, 12)}`);
  } else if (stamped !== fingerprint) {
    console.error('The OpenAPI document changed since CHANGELOG.md was last stamped: describe the change in CHANGELOG.md, then run node bin/openapi.js stamp.');
    throw Object.assign(new Error('changelog not stamped'), { status: 1 });
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
const file = path.join(dir, 'openapi.json');
try {
  run(path.join(root, 'bin', 'build.js'), ['--stale']);
  run(path.join(root, 'dist', 'src', 'openapi', 'write-document.js'), [file]);
  if (command === 'lint') {
    redocly('lint', '--config', path.join(root, 'redocly.yaml'), file);
    openapiTypescript(file, '--output', API_TYPES, '--check');
    checkChangelog(file);
  } else if (command === 'stamp') {
    checkChangelog(file);
  } else {
    openapiTypescript(file, '--output', API_TYPES);
  }
} catch (error) {
  process.exitCode = error.status ?? 1;
  if (!error.status) console.error(error);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
