#!/usr/bin/env node
/**
 * Issue 40: what inspecting a published file costs as the file grows. For each format and
 * size, a real file is written to a local blob store (the bulk of it as a sparse hole: an
 * ONNX initializer's raw_data, safetensors data, an MCAP private record, the unreferenced
 * bytes between a Parquet file's magic and its first column chunk written by
 * hyparquet-writer; an HDF5 file is written whole by h5wasm, a chunked float32 dataset
 * filled slice by slice, then small datasets after it), then inspected
 * through the store's ranged reads; reported: bytes read and the RSS the inspection added.
 * Flat bytes read and RSS across sizes mean the inspection never reads the whole file.
 *
 *   npm run build && node --expose-gc bench/inspection.js [--sizes 64,512,2048] [--formats parquet,hdf5]   (MiB)
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { LocalBlobStore } = require('../dist/src/storage/local-blob-store');
const { RangedFile } = require('../dist/src/inspection/ranged-file');
const { inspectFile } = require('../dist/src/inspection/registry');
const { DEFAULT_LIMITS } = require('../dist/src/inspection/inspection');

const MiB = 1024 * 1024;
const sizes = (process.argv.includes('--sizes') ? process.argv[process.argv.indexOf('--sizes') + 1] : '64,512,2048').split(',').map(Number);

const varint = (n) => { const out = []; while (n >= 0x80) { out.push((n % 128) | 0x80); n = Math.floor(n / 128); } out.push(n); return Buffer.from(out); };
const tag = (field, wire) => varint(field * 8 + wire);
const len = (field, body) => Buffer.concat([tag(field, 2), varint(body.length), body]);
const num = (field, value) => Buffer.concat([tag(field, 0), varint(value)]);

function safetensorsLayout(total) {
  const headerLength = 128;
  const hole = total - 8 - headerLength;
  const json = JSON.stringify({ w: { dtype: 'U8', shape: [hole], data_offsets: [0, hole] } }).padEnd(headerLength, ' ');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerLength));
  return [Buffer.concat([length, Buffer.from(json)]), hole, Buffer.alloc(0)];
}

/** Writers run in a child process (`--write <format> <file> <bytes>`): their memory is not the inspection's. */
const inChild = (format) => async (file, total) => {
  execFileSync(process.execPath, [__filename, '--write', format, file, String(total)], { stdio: 'inherit' });
};

/**
 * An ONNX model of `total` bytes encoded by onnx-proto: the bench's policy (obs -> Gemm ->
 * action) with an unused UINT8 initializer `padding` making up the size. Its size is set
 * from a first encoding's length (protobufjs counts it before writing a byte).
 */
function writeOnnx(file, total) {
  const { onnx } = require('onnx-proto');
  const { onnxModelObject } = require('./onnx-model');
  const model = (padding) => {
    const object = onnxModelObject('bench');
    object.graph.initializer.push({ name: 'padding', dims: [padding], dataType: onnx.TensorProto.DataType.UINT8, rawData: Buffer.alloc(padding) });
    return onnx.ModelProto.fromObject(object);
  };
  const guess = total - 1024;
  const padding = guess + (total - onnx.ModelProto.encode(model(guess)).len);
  const bytes = onnx.ModelProto.encode(model(padding)).finish();
  if (bytes.length !== total) throw new Error(`onnx: ${bytes.length} bytes written, ${total} wanted`);
  fs.writeFileSync(file, bytes);
}

/** An indexed MCAP recording of about `total` bytes written by McapWriter: /camera/image 64 KiB messages at 30 Hz, /joint_states at 100 Hz. */
async function writeMcap(file, total) {
  const { McapWriter } = require('@mcap/core');
  const fd = fs.openSync(file, 'w');
  let position = 0n;
  const writer = new McapWriter({
    writable: { position: () => position, write: async (buffer) => { fs.writeSync(fd, buffer); position += BigInt(buffer.byteLength); } },
    chunkSize: MiB,
  });
  await writer.start({ profile: 'ros2', library: 'bench/inspection.js' });
  const image = await writer.registerSchema({ name: 'sensor_msgs/msg/Image', encoding: 'ros2msg', data: Buffer.from('uint8[] data') });
  const joints = await writer.registerSchema({ name: 'sensor_msgs/msg/JointState', encoding: 'ros2msg', data: Buffer.from('float64[] position') });
  const camera = await writer.registerChannel({ topic: '/camera/image', schemaId: image, messageEncoding: 'cdr', metadata: new Map() });
  const state = await writer.registerChannel({ topic: '/joint_states', schemaId: joints, messageEncoding: 'cdr', metadata: new Map() });
  const frame = new Uint8Array(64 * 1024).fill(7);
  const jointMessage = new Uint8Array(7 * 8);
  const t0 = 1_700_000_000_000_000_000n;
  // Leaves room for the last chunk and the summary.
  for (let i = 0; position < BigInt(total - Math.round(1.2 * MiB)); i++) {
    const logTime = t0 + (BigInt(i) * 1_000_000_000n) / 30n;
    await writer.addMessage({ channelId: camera, sequence: i, logTime, publishTime: logTime, data: frame });
    for (let j = 0; j < 3; j++) await writer.addMessage({ channelId: state, sequence: i * 3 + j, logTime: logTime + BigInt(j) * 10_000_000n, publishTime: logTime, data: jointMessage });
  }
  await writer.end();
  fs.closeSync(fd);
}

/**
 * Parquet written by hyparquet-writer's ParquetWriter: after it writes the leading PAR1, its
 * writer's offset is moved on by the hole, so the column chunks and the footer that points
 * at them are written after it (bytes no column chunk covers are ignored by readers).
 */
async function writeParquet(file, total) {
  const { ByteWriter, ParquetWriter, schemaFromColumnData } = await import('hyparquet-writer');
  const rows = 10_000;
  const index = Array.from({ length: rows }, (_, i) => i);
  const columnData = [
    { name: 'timestamp', data: index.map((i) => i / 30), type: 'FLOAT' },
    { name: 'frame_index', data: index.map((i) => BigInt(i)), type: 'INT64' },
    { name: 'episode_index', data: index.map(() => 0n), type: 'INT64' },
    ...Array.from({ length: 14 }, (_, j) => ({ name: `observation.state.${j}`, data: index.map((i) => Math.sin(i + j)), type: 'FLOAT' })),
  ];
  const writer = new ByteWriter();
  const pq = new ParquetWriter({ writer, schema: schemaFromColumnData({ columnData }) });
  const magic = Buffer.from(writer.getBytes());
  writer.index = 0;
  const rest = () => Buffer.from(writer.getBytes());
  // The hole is the file's size less what the rest takes: written once to learn its length.
  const probe = new ByteWriter();
  const probePq = new ParquetWriter({ writer: probe, schema: schemaFromColumnData({ columnData }) });
  probePq.write({ columnData, rowGroupSize: 2000 });
  probePq.finish();
  const hole = total - probe.offset;
  writer.offset += hole;
  pq.write({ columnData, rowGroupSize: 2000 });
  pq.finish();
  writeSparse(file, magic, hole, rest());
}

/** HDF5 written by h5wasm's Node build (it writes the real file): data/demo_0/actions, float32 [rows, 16] in 2 MiB chunks, filled; then obs and rewards. */
async function writeHdf5(file, total) {
  const h5 = await import('h5wasm/node');
  await h5.ready;
  const width = 16;
  const rows = Math.floor(total / 4 / width);
  const chunkRows = 32_768;
  const f = new h5.File(file, 'w');
  const demo = f.create_group('data').create_group('demo_0');
  const actions = demo.create_dataset({ name: 'actions', data: new Float32Array(chunkRows * width), shape: [chunkRows, width], maxshape: [null, width], chunks: [chunkRows, width], dtype: '<f' });
  actions.resize([rows, width]);
  const slice = new Float32Array(chunkRows * 16 * width).fill(0.5);
  for (let at = 0; at < rows; at += chunkRows * 16) {
    const n = Math.min(chunkRows * 16, rows - at);
    actions.write_slice([[at, at + n], [0, width]], n === chunkRows * 16 ? slice : slice.subarray(0, n * width));
  }
  demo.create_group('obs').create_dataset({ name: 'joint_pos', data: new Float64Array(70), shape: [10, 7], dtype: '<d' });
  demo.create_dataset({ name: 'rewards', data: new Float32Array(10), shape: [10], dtype: '<f' });
  f.close();
}

function writeSparse(file, prefix, hole, suffix) {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, prefix, 0, prefix.length, 0);
  fs.ftruncateSync(fd, prefix.length + hole + suffix.length);
  fs.writeSync(fd, suffix, 0, suffix.length, prefix.length + hole);
  fs.closeSync(fd);
}

const layout = (make) => async (file, total) => {
  const [prefix, hole, suffix] = make(total);
  writeSparse(file, prefix, hole, suffix);
};

const FORMATS = [
  ['onnx', 'model.onnx', inChild('onnx')],
  ['safetensors', 'model.safetensors', layout(safetensorsLayout)],
  ['mcap', 'run.mcap', inChild('mcap')],
  ['parquet', 'episode.parquet', writeParquet],
  ['hdf5', 'demos.hdf5', writeHdf5],
];

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inspection-bench-'));
  const store = new LocalBlobStore(dir, 'http://127.0.0.1');
  const rows = [];
  try {
    const only = process.argv.includes('--formats') ? process.argv[process.argv.indexOf('--formats') + 1].split(',') : null;
    for (const [format, name, write] of FORMATS.filter(([format]) => !only || only.includes(format))) {
      for (const mib of sizes) {
        const key = `bench/${mib}-${name}`;
        const file = path.join(dir, 'blobs', key);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        // protobuf caps a message at 2 GiB: the largest ONNX file stops 1 KiB short of it.
        await write(file, format === 'onnx' && mib * MiB >= 2 ** 31 ? 2 ** 31 - 1024 : mib * MiB);
        const size = fs.statSync(file).size;
        global.gc?.();
        const before = process.memoryUsage().rss;
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
        const ranged = RangedFile.ofStore(store, key, name, size, DEFAULT_LIMITS);
        const started = process.hrtime.bigint();
        const outcome = await inspectFile(ranged);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        clearInterval(sampler);
        peak = Math.max(peak, process.memoryUsage().rss);
        if (!outcome.ok) throw new Error(`${name} (${mib} MiB): ${outcome.problem.message}`);
        rows.push({ format, file_mib: mib, file_bytes: size, bytes_read: ranged.read, rss_added_mib: Math.round(((peak - before) / MiB) * 10) / 10, ms: Math.round(ms) });
        fs.rmSync(file);
        console.error(JSON.stringify(rows.at(-1)));
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.table(rows);
  if (!process.argv.includes('--no-publish')) await publishLatency();
}

/**
 * POST /v1/models of a 1 MiB ONNX model (inspected before the answer: parsed, then loaded
 * in onnxruntime) against the same bytes as `policy.engine` (opaque: no inspection), on one
 * service (PGlite), rounds alternated, the upload outside the timing; medians.
 */
async function publishLatency() {
  const { ADMIN, serve, admin, median } = require('./harness');
  const { onnxModel } = require('./onnx-model');
  const rounds = Number(process.env.BENCH_ROUNDS || 20);
  const content = onnxModel('bench-publish', 37_449);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inspection-publish-'));
  // serve() waits up to 5 minutes for it to answer (a loaded machine starts it slowly) and stops it on the way out.
  const main = path.join(__dirname, '../dist/src/main.js');
  const { base, stop } = await serve(main, { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_TOKEN: ADMIN, NODE_ENV: 'development', LOG_LEVEL: 'warn' }, async (b) => (await fetch(`${b}/v1/me`)).status === 401);
  try {
    const seller = await admin(base, 'POST', '/admin/accounts', { name: 'Bench Seller', email: 'seller@example.com' });
    const key = (await admin(base, 'POST', '/admin/keys', { account: seller.id, mode: 'test' })).key;
    const call = async (route, body) => {
      const r = await fetch(`${base}${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, body: await r.json() };
    };
    const publish = async (fileName, i) => {
      const grant = (await call('/v1/uploads', { file_name: fileName, file_size: content.length })).body;
      const put = await fetch(grant.upload_url, { method: 'PUT', body: content, headers: { 'content-type': 'application/octet-stream' } });
      if (put.status !== 200) throw new Error(`upload failed: ${put.status}`);
      const started = performance.now();
      const model = await call('/v1/models', { title: `Bench Policy ${fileName} ${i}`, type: 'rl-policy', license: 'MIT', price_cents: 1000, storage_path: grant.storage_path, file_name: grant.file_name, file_size: grant.file_size, file_extension: grant.file_extension });
      const ms = performance.now() - started;
      if (model.status !== 201) throw new Error(`publish ${fileName}: ${model.status} ${JSON.stringify(model.body)}`);
      if (fileName.endsWith('.onnx') && model.body.inspection?.format !== 'onnx') throw new Error(`not inspected: ${JSON.stringify(model.body.inspection)}`);
      return ms;
    };
    for (let i = 0; i < 3; i++) await publish('policy.onnx', `warm ${i}`), await publish('policy.engine', `warm ${i}`);
    const times = { onnx: [], engine: [] };
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 ? ['engine', 'onnx'] : ['onnx', 'engine'];
      for (const ext of order) times[ext].push(await publish(`policy.${ext}`, i));
    }
    const onnxMs = median(times.onnx);
    const engineMs = median(times.engine);
    console.table([{ model_bytes: content.length, rounds, inspected_onnx_p50_ms: Math.round(onnxMs * 10) / 10, uninspected_engine_p50_ms: Math.round(engineMs * 10) / 10, ratio: Math.round((onnxMs / engineMs) * 100) / 100 }]);
  } finally {
    await stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--write') {
  const [, , , format, file, total] = process.argv;
  Promise.resolve({ onnx: writeOnnx, mcap: writeMcap }[format](file, Number(total))).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else main().catch((error) => {
  console.error(error);
  process.exit(1);
});
