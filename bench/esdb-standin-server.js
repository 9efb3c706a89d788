#!/usr/bin/env node
/**
 * The tests' EventStoreDB stand-in (test/support/esdb-standin.ts) as a server process of its
 * own, for benchmarks: transpiled in memory with the project's own TypeScript (a dev
 * dependency, as for the tests), loaded as if it were the .ts file, so its imports resolve
 * from the project's node_modules. Prints {"port": N} on stdout once it listens; SIGTERM
 * stops it.
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
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
