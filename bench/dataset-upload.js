#!/usr/bin/env node
/**
 * A directory of many small files (issue 41): `svc datasets upload DIR` (every file a shard,
 * `--parallel` at a time) against the same files sent with `svc upload FILE` one by one, in
 * the same run, on one service (node dist/src/main.js, PGlite and the local blob store under
 * a temp DATA_DIR, in its own process).
 *
 * Both sides are the built CLI's own commands (dist/src/cli/main.js `runCli`) called in this
 * process: a command each file for the one-by-one side, one command for the directory. That
 * leaves out the start-up of a Node process per file a shell loop over `svc upload` would pay
 * (reported beside, measured on BENCH_SPAWN_FILES files with bin/svc.js), so the ratio does not
 * flatter the directory upload. Each round uploads to a new dataset (and new upload names),
 * the order of the two sides alternating; figures are medians over rounds.
 *   node bench/dataset-upload.js [--json]     (npm run build first)
 * BENCH_FILES (default 1000), BENCH_FILE_BYTES (default 2048), BENCH_PARALLEL (default 4),
 * BENCH_ROUNDS (default 2), BENCH_SPAWN_FILES (default 20; 0 leaves it out).
 */
const { execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');
const { ADMIN, median, serve } = require('./harness');
const { api } = require('./upload-multipart');

const FILES = Number(process.env.BENCH_FILES || 1000);
const FILE_BYTES = Number(process.env.BENCH_FILE_BYTES || 2048);
const PARALLEL = Number(process.env.BENCH_PARALLEL || 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2);
const SPAWN_FILES = Number(process.env.BENCH_SPAWN_FILES ?? 20);
const SVC = path.join(__dirname, '../bin/svc.js');
const json = process.argv.includes('--json');
const run = promisify(execFile);

/** FILES files of FILE_BYTES random bytes under dir, ten folders of them, as a recording's frames are kept. */
function writeFiles(dir) {
  const names = [];
  for (let i = 0; i < FILES; i++) {
    const name = `chunk-${String(i % 10).padStart(3, '0')}/frame_${String(i).padStart(6, '0')}.txt`;
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), crypto.randomBytes(FILE_BYTES).toString('base64').slice(0, FILE_BYTES));
    names.push(name);
  }
  return names;
}

/**
 * The service on PGlite and the local store in dataDir, an account and a test-mode key on it,
 * once its read models are current (start-up catch-up is not upload work). It is given up to
 * five minutes to start (harness.serve): PGlite's migrations on a loaded machine take a while.
 */
async function serviceWithKey(dataDir) {
  const main = path.join(__dirname, '../dist/src/main.js');
  const env = { DATA_DIR: dataDir, DATABASE_URL: '', S3_BUCKET: '', S3_ENDPOINT: '', ADMIN_TOKEN: ADMIN, NODE_ENV: 'development', LOG_LEVEL: 'warn' };
  const service = await serve(main, env, async (base) => (await fetch(`${base}/v1/me`)).status === 401);
  try {
    const account = await api(service.base, 'POST', '/admin/accounts', ADMIN, { name: 'Bench', email: 'bench@example.com' });
    const { key } = await api(service.base, 'POST', '/admin/keys', ADMIN, { account: account.id, mode: 'test' });
    for (let i = 0; ; i++) {
      const status = await api(service.base, 'GET', '/admin/projections', ADMIN);
      if (status.items.every((p) => !p.behind && !p.rebuilding)) break;
      if (i > 3000) throw new Error('the service did not catch up');
      await new Promise((r) => setTimeout(r, 100));
    }
    return { ...service, key };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

async function main() {
  const dist = path.join(__dirname, '../dist/src/cli/main.js');
  if (!fs.existsSync(dist)) throw new Error('dist/ has no CLI: run "npm run build" first');
  const { runCli } = require(dist);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dataset-upload-'));
  const source = path.join(work, 'files');
  const names = writeFiles(source);
  const service = await serviceWithKey(path.join(work, 'data'));
  const env = { ...process.env, SVC_URL: service.base, SVC_API_KEY: service.key };
  const cli = async (argv) => {
    let out = '';
    let err = '';
    const code = await runCli([...argv, '--json'], (t) => (out += t), (t) => (err += t), env);
    if (code !== 0) throw new Error(`svc ${argv.join(' ')}: ${err}`);
    return JSON.parse(out);
  };
  let round = 0;
  const directory = async () => {
    const dataset = await api(service.base, 'POST', '/v1/datasets', service.key, { title: `Bench Upload ${round++}` });
    const started = process.hrtime.bigint();
    const result = await cli(['datasets', 'upload', source, '--dataset', dataset.id, '--parallel', String(PARALLEL)]);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (result.uploaded.length !== FILES || result.count !== FILES) throw new Error(`the directory upload landed ${result.count} shards of ${FILES}`);
    return seconds;
  };
  const oneByOne = async () => {
    const started = process.hrtime.bigint();
    for (const name of names) {
      const result = await cli(['upload', path.join(source, name)]);
      if (result.file_size !== FILE_BYTES) throw new Error(`svc upload ${name} stored ${result.file_size} bytes`);
    }
    return Number(process.hrtime.bigint() - started) / 1e9;
  };
  const times = { directory: [], oneByOne: [] };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ['directory', 'oneByOne'] : ['oneByOne', 'directory'];
      for (const side of order) times[side].push(side === 'directory' ? await directory() : await oneByOne());
      if (!json) console.log(`round ${r + 1}: directory ${times.directory.at(-1).toFixed(2)} s, one by one ${times.oneByOne.at(-1).toFixed(2)} s`);
    }
    let spawnPerFile = null;
    if (SPAWN_FILES > 0) {
      const started = process.hrtime.bigint();
      for (const name of names.slice(0, SPAWN_FILES)) await run(process.execPath, [SVC, 'upload', path.join(source, name), '--json'], { env });
      spawnPerFile = Number(process.hrtime.bigint() - started) / 1e9 / SPAWN_FILES;
    }
    const directorySeconds = median(times.directory);
    const oneByOneSeconds = median(times.oneByOne);
    const result = {
      files: FILES,
      file_bytes: FILE_BYTES,
      parallel: PARALLEL,
      rounds: ROUNDS,
      directory_s: directorySeconds,
      one_by_one_s: oneByOneSeconds,
      speedup: oneByOneSeconds / directorySeconds,
      directory_files_per_s: FILES / directorySeconds,
      one_by_one_files_per_s: FILES / oneByOneSeconds,
      svc_upload_process_s: spawnPerFile,
      load: os.loadavg()[0],
    };
    if (json) console.log(JSON.stringify(result));
    else {
      console.log(`${FILES} files of ${FILE_BYTES} bytes: svc datasets upload --parallel ${PARALLEL} ${directorySeconds.toFixed(2)} s (${result.directory_files_per_s.toFixed(0)} files/s); svc upload one by one ${oneByOneSeconds.toFixed(2)} s (${result.one_by_one_files_per_s.toFixed(0)} files/s): ${result.speedup.toFixed(2)}x`);
      if (spawnPerFile !== null) console.log(`svc upload as its own process (a shell loop): ${spawnPerFile.toFixed(3)} s a file, over ${SPAWN_FILES} files`);
      console.log(`load average ${result.load.toFixed(2)}`);
    }
  } finally {
    await service.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
