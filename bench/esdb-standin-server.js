#!/usr/bin/env node
/**
 * The tests' EventStoreDB stand-in (test/support/esdb-standin.ts) as a server process of its
 * own, for benchmarks: transpiled in memory with the project's own TypeScript (a dev
 * dependency, as for the tests), loaded as if it were the .ts file, so its imports resolve
 * from the project's node_modules. Prints {"port": N} on stdout once it listens; SIGTERM,
 * or the end of its stdin (its parent exiting), stops it.
 *   node bench/esdb-standin-server.js [port]
 */
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const ts = require('typescript');

function loadStandIn() {
  const file = path.join(__dirname, '../test/support/esdb-standin.ts');
  const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  mod._compile(outputText, file);
  return mod.exports.EsdbStandIn;
}

async function main() {
  const EsdbStandIn = loadStandIn();
  const standIn = await new EsdbStandIn().start(Number(process.argv[2] || 0));
  process.stdout.write(`${JSON.stringify({ port: standIn.port })}\n`);
  const stop = async () => {
    await standIn.stop();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Started with a pipe on stdin (as bench/eventstore.js does): its end, the parent gone
  // however it went, stops the stand-in too.
  if (!process.stdin.isTTY) {
    process.stdin.on('end', stop);
    process.stdin.resume();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
