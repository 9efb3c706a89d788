#!/usr/bin/env node
/**
 * Upload throughput through a local signed URL (issue 14): MiB/s of one PUT of N MiB to the
 * URL POST /v1/uploads grants, against a bare Node http server that pipes the PUT body into
 * a file (bench/upload-baseline-server.js), in the same run. Goal: ratio >= 0.8.
 *
 * The service (node dist/src/main.js, PGlite and the local blob store under a temp DATA_DIR)
 * and the baseline each run in their own process; this process is only the client, which
 * streams N MiB with a fixed content-length from one reused 64 KiB buffer. Only the PUT is
 * timed, on both sides (the grant is a separate small request before it). Each round uploads
 * to both, the order alternating; every file is checked for its size and deleted after its
 * round. Figures are medians over rounds. The service writes its file with a 1 MiB
 * highWaterMark, so a third target, the same bare server with that highWaterMark too, shows
 * what is left of the service's own overhead (informative; the goal is against the plain one).
 * Then the multipart row (issue 28, bench/upload-multipart.js: a file through the service's
 * multipart grant to presigned S3 part URLs against the AWS SDK straight to the gateway),
 * or a line saying why it was skipped; under --json it is the `multipart` field.
 *   node bench/upload.js [--json]     (npm run build first)
 * BENCH_UPLOAD_MIB (default 500), BENCH_ROUNDS (default 3); the multipart row's settings
 * are at the top of bench/upload-multipart.js.
 */
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { median, pumpBody, serve } = require('./harness');
const { api, multipartRow, printMultipart, serviceWithKey } = require('./upload-multipart');

const MiB = 1024 * 1024;
const SIZE_MIB = Number(process.env.BENCH_UPLOAD_MIB || 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const WARM_UP_MIB = 32;
const CHUNK = Buffer.alloc(64 * 1024, 0x5a);
const json = process.argv.includes('--json');

/** PUTs `size` bytes with a fixed content-length as fast as backpressure allows; resolves to seconds taken. */
function streamUpload(url, size) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { method: 'PUT', headers: { 'content-length': size, 'content-type': 'application/octet-stream' } });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`PUT ${res.statusCode}: ${body}`));
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const answered = JSON.parse(body);
        if (answered.size !== size) return reject(new Error(`PUT stored ${answered.size} bytes of ${size}`));
        resolve(seconds);
      });
    });
    pumpBody(req, size, CHUNK);
  });
}

/** The three targets as `upload(mib) -> seconds`, each leaving no file behind. */
async function startTargets(dataDir, baselineDir) {
  // The local blob store, whatever S3 settings the shell has (they are for the multipart row),
  // and one PUT per file: no multipart upload started beside it up to 5 GiB, the largest one PUT.
  const service = await serviceWithKey({ DATA_DIR: dataDir, DATABASE_URL: '', S3_BUCKET: '', S3_ENDPOINT: '', UPLOAD_MULTIPART_THRESHOLD: String(5 * 1024 * MiB) });
  const { key } = service;
  const bareServer = (env) => serve(path.join(__dirname, 'upload-baseline-server.js'), { UPLOAD_DIR: baselineDir, ...env }, async (b) => (await fetch(b)).ok);
  const baseline = await bareServer({});
  const tuned = await bareServer({ UPLOAD_HWM: String(MiB) });
  let n = 0;
  const ours = async (mib) => {
    const grant = await api(service.base, 'POST', '/v1/uploads', key, { file_name: `bench-${n++}.bag`, file_size: mib * MiB });
    const seconds = await streamUpload(grant.upload_url, mib * MiB);
    // A test-mode key's staged files are under test/ (src/storage/mode-staging.ts).
    fs.rmSync(path.join(dataDir, 'blobs', 'test', grant.storage_path));
    if (fs.readdirSync(path.join(dataDir, 'blobs', '.incoming')).length) throw new Error('the service left a temp file behind');
    return seconds;
  };
  const bareAt = (server) => async (mib) => {
    const name = `bench-${n++}.bag`;
    const seconds = await streamUpload(`${server.base}/${name}`, mib * MiB);
    fs.rmSync(path.join(baselineDir, name));
    return seconds;
  };
  const stop = async () => {
    await service.stop();
    await baseline.stop();
    await tuned.stop();
  };
  return { ours, bare: bareAt(baseline), bare1m: bareAt(tuned), stop };
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-upload-svc-'));
  const baselineDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-upload-bare-'));
  const targets = await startTargets(dataDir, baselineDir);
  const samples = { ours: [], bare: [], bare1m: [] };
  const loadavg = os.loadavg();
  try {
    // One-time costs (JIT, first file in a new directory) are not charged to a round.
    for (const which of Object.keys(samples)) await targets[which](WARM_UP_MIB);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['ours', 'bare', 'bare1m'] : ['bare1m', 'bare', 'ours'];
      for (const which of order) samples[which].push(SIZE_MIB / (await targets[which](SIZE_MIB)));
    }
  } finally {
    await targets.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(baselineDir, { recursive: true, force: true });
  }
  const round1 = (x) => +x.toFixed(1);
  const result = {
    bench: 'upload',
    node: process.version,
    mib: SIZE_MIB,
    rounds: ROUNDS,
    loadavg_before: loadavg.map((x) => +x.toFixed(2)),
    loadavg_after: os.loadavg().map((x) => +x.toFixed(2)),
    ours_mib_per_s: round1(median(samples.ours)),
    baseline_mib_per_s: round1(median(samples.bare)),
    baseline_1mib_hwm_mib_per_s: round1(median(samples.bare1m)),
    ours_samples: samples.ours.map(round1),
    baseline_samples: samples.bare.map(round1),
    baseline_1mib_hwm_samples: samples.bare1m.map(round1),
  };
  result.ratio = +(result.ours_mib_per_s / result.baseline_mib_per_s).toFixed(2);
  result.ratio_to_1mib_hwm = +(result.ours_mib_per_s / result.baseline_1mib_hwm_mib_per_s).toFixed(2);
  if (!json) printLocal(result);
  // The multipart row (bench/upload-multipart.js), on an S3 server, after the local row's processes stopped.
  result.multipart = await multipartRow();
  if (json) return console.log(JSON.stringify(result));
  printMultipart(result.multipart);
}

function printLocal(result) {
  console.log(`PUT of ${SIZE_MIB} MiB, median of ${ROUNDS} rounds (load average before ${result.loadavg_before.join(' ')}, after ${result.loadavg_after.join(' ')})`);
  console.log(`  service signed URL  ${result.ours_mib_per_s} MiB/s   (${result.ours_samples.join(', ')})`);
  console.log(`  bare http PUT->file ${result.baseline_mib_per_s} MiB/s   (${result.baseline_samples.join(', ')})`);
  console.log(`  bare, 1 MiB hwm    ${result.baseline_1mib_hwm_mib_per_s} MiB/s   (${result.baseline_1mib_hwm_samples.join(', ')})`);
  console.log(`  ratio ${result.ratio} (goal >= 0.8); to the bare server with the service's highWaterMark ${result.ratio_to_1mib_hwm}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
