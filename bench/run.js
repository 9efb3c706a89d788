#!/usr/bin/env node
/**
 * npm run bench: every benchmark, one after the other, each printing its figures next to a
 * baseline measured in the same run. Needs a Postgres server (DATABASE_URL, default the
 * local one) for bench/me.js, bench/idempotency.js, bench/revocation.js, bench/search.js, bench/rebuild.js, bench/eventstore.js, bench/long-streams.js, bench/journal.js, bench/inference.js and bench/console.js; the others take DATABASE_URL when set, else PGlite.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const benches = [
  ['node', [path.join(__dirname, 'appends.js')]],
  ['node', [path.join(__dirname, 'rebuild.js')]],
  ['node', [path.join(__dirname, 'eventstore.js')]],
  ['node', [path.join(__dirname, 'me.js')]],
  ['node', [path.join(__dirname, 'idempotency.js')]],
  ['node', [path.join(__dirname, 'revocation.js')]],
  ['node', [path.join(__dirname, 'search.js')]],
  ['node', [path.join(__dirname, 'webhooks.js')]],
  ['node', [path.join(__dirname, 'long-streams.js')]],
  ['node', [path.join(__dirname, 'journal.js')]],
  ['node', [path.join(__dirname, 'console.js')]],
  ['node', [path.join(__dirname, 'checkout-latency.js')]],
  ['node', [path.join(__dirname, 'inference.js')]],
  ['node', [path.join(__dirname, 'factory.js')]],
  ['node', ['--expose-gc', path.join(__dirname, 'upload-rss.js')]],
  ['node', [path.join(__dirname, 'upload.js')]],
  ['node', [path.join(__dirname, 'dataset-upload.js')]],
];

let failed = 0;
for (const [command, args] of benches) {
  process.stdout.write(`\n== ${path.basename(args[args.length - 1])}\n`);
  const run = spawnSync(command, args, { stdio: 'inherit' });
  if (run.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
