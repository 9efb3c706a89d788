#!/usr/bin/env node
/**
 * GET /v1/datasets/{id}/preview of a 10,000-shard LeRobot dataset (issue 41: p99 < 100 ms at
 * c=10, goal), next to GET /v1/datasets/{id} of the same dataset in the same run. The dataset
 * is made through the API as a seller makes it: meta/info.json claiming 9,999 episodes and one
 * Parquet file each (written by hyparquet-writer), uploaded to the local store, published
 * (frozen, inspected, sampled). The service runs as its own process (workers on), autocannon
 * in another, medians of BENCH_ROUNDS (3) rounds of BENCH_SECONDS (10).
 * Runs on the built code: node bench/dataset-preview.js [--json]
 * DATABASE_URL names the Postgres server (default the local one); a scratch database is
 * made and dropped there. BENCH_SHARDS changes the size (default 10000).
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { load, median, serveService, settled, untilProjections } = require('./harness');
const { benchSettings, report, runBench, withScratchDatabase } = require('./support');

const { seconds: SECONDS, rounds: ROUNDS, json, serverUrl } = benchSettings();
const SHARDS = Number(process.env.BENCH_SHARDS || 10_000);
const CONNECTIONS = 10;
const UPLOAD_CONCURRENCY = 16;

/** One episode's Parquet bytes (20 frames), written by hyparquet-writer in a child process (an ES module). */
function episodeParquet() {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'preview-bench-')), 'episode.parquet');
  execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { parquetWriteFile } from 'hyparquet-writer';
    const i = Array.from({ length: 20 }, (_, k) => k);
    parquetWriteFile({ filename: ${JSON.stringify(file)}, columnData: [
      { name: 'timestamp', data: i.map((k) => k / 30), type: 'FLOAT' },
      { name: 'frame_index', data: i.map((k) => BigInt(k)), type: 'INT64' },
      { name: 'action_x', data: i.map((k) => Math.sin(k)), type: 'FLOAT' },
    ] });`], { cwd: path.resolve(__dirname, '..') });
  const bytes = fs.readFileSync(file);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  return bytes;
}

async function api(base, key, method, route, body) {
  const r = await fetch(`${base}${route}`, { method, headers: { authorization: `Bearer ${key}`, ...(body && { 'content-type': 'application/json' }) }, body: body && JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${method} ${route}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** The dataset as a seller makes it: drafted, every shard minted and PUT, published. */
async function seed(base, key) {
  const episodes = SHARDS - 1;
  const info = Buffer.from(JSON.stringify({
    codebase_version: 'v2.1', robot_type: 'so100', total_episodes: episodes, total_frames: episodes * 20, fps: 30, chunks_size: 1000,
    data_path: 'data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet',
    features: { timestamp: { dtype: 'float32', shape: [1] }, frame_index: { dtype: 'int64', shape: [1] }, action_x: { dtype: 'float32', shape: [1] } },
  }));
  const parquet = episodeParquet();
  const dataset = await api(base, key, 'POST', '/v1/datasets', { title: 'Preview Bench', price_cents: 2500 });
  const shards = [['meta/info.json', info], ...Array.from({ length: episodes }, (_, e) => [`data/chunk-${String(Math.floor(e / 1000)).padStart(3, '0')}/episode_${String(e).padStart(6, '0')}.parquet`, parquet])];
  let next = 0;
  const worker = async () => {
    while (next < shards.length) {
      const [name, bytes] = shards[next++];
      const grant = await api(base, key, 'POST', `/v1/datasets/${dataset.id}/shards`, { name, size: bytes.length });
      const put = await fetch(grant.upload_url, { method: 'PUT', body: bytes, headers: grant.upload_headers ?? {} });
      if (put.status !== 200) throw new Error(`PUT ${name}: ${put.status} ${await put.text()}`);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, worker));
  const uploaded = Date.now();
  const published = await api(base, key, 'POST', `/v1/datasets/${dataset.id}/publish`);
  if (published.status !== 'published') throw new Error(`publish: ${JSON.stringify(published.validation_errors)}`);
  return { id: dataset.id, upload_s: (uploaded - started) / 1000, publish_s: (Date.now() - uploaded) / 1000 };
}

async function main() {
  const runs = { preview: [], dataset: [] };
  let seeded;
  let previewBytes;
  await withScratchDatabase(serverUrl, async (url, key) => {
    const service = await serveService(url, { workers: true });
    try {
      seeded = await seed(service.base, key);
      await untilProjections(service.base, settled);
      const preview = await api(service.base, key, 'GET', `/v1/datasets/${seeded.id}/preview`);
      if (preview.summary.files !== SHARDS || preview.sample.rows.length !== 20) throw new Error(`unexpected preview: ${JSON.stringify(preview.summary)}`);
      previewBytes = Buffer.byteLength(JSON.stringify(preview));
      const targets = { preview: `${service.base}/v1/datasets/${seeded.id}/preview`, dataset: `${service.base}/v1/datasets/${seeded.id}` };
      for (const target of Object.values(targets)) await load(target, { key, connections: CONNECTIONS, seconds: 2 }); // warm-up
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? ['dataset', 'preview'] : ['preview', 'dataset'];
        for (const name of order) runs[name].push(await load(targets[name], { key, connections: CONNECTIONS, seconds: SECONDS }));
      }
    } finally {
      await service.stop();
    }
  });
  const of = (xs, k) => median(xs.map((x) => x[k]));
  const result = {
    shards: SHARDS,
    upload_s: seeded.upload_s,
    publish_s: seeded.publish_s,
    preview_bytes: previewBytes,
    preview_p50_ms: of(runs.preview, 'p50'),
    preview_p99_ms: of(runs.preview, 'p99'),
    preview_req_per_s: Math.round(of(runs.preview, 'rps')),
    dataset_p50_ms: of(runs.dataset, 'p50'),
    dataset_p99_ms: of(runs.dataset, 'p99'),
    dataset_req_per_s: Math.round(of(runs.dataset, 'rps')),
  };
  report(
    json,
    result,
    (r) =>
      `A ${r.shards}-shard LeRobot dataset (uploaded in ${r.upload_s}s, published in ${r.publish_s}s), ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} rounds (medians), Postgres server\n` +
      `  GET /v1/datasets/{id}/preview (${r.preview_bytes} bytes): p50 ${r.preview_p50_ms} ms, p99 ${r.preview_p99_ms} ms (goal < 100), ${r.preview_req_per_s} req/s\n` +
      `  GET /v1/datasets/{id} (same dataset):        p50 ${r.dataset_p50_ms} ms, p99 ${r.dataset_p99_ms} ms, ${r.dataset_req_per_s} req/s\n`,
  );
}

runBench(main);
