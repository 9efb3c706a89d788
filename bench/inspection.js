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

/** [prefix, hole length, suffix]: the file is prefix, `hole` zero bytes, suffix. */
function onnxLayout(total) {
  const output = len(12, Buffer.concat([len(1, Buffer.from('w')), len(2, len(1, Buffer.concat([num(1, 1), len(2, len(1, num(1, 4)))])))]));
  const opset = len(8, num(2, 13));
  const hole = total - 200;
  const tensorHead = Buffer.concat([num(1, hole / 4), num(2, 1), len(8, Buffer.from('w')), tag(9, 2), varint(hole)]);
  const tensorLength = tensorHead.length + hole;
  const initializer = Buffer.concat([tag(5, 2), varint(tensorLength), tensorHead]);
  const graphLength = initializer.length + hole + output.length;
  const prefix = Buffer.concat([num(1, 8), tag(7, 2), varint(graphLength), initializer]);
  return [prefix, hole, Buffer.concat([output, opset])];
}

function safetensorsLayout(total) {
  const headerLength = 128;
  const hole = total - 8 - headerLength;
  const json = JSON.stringify({ w: { dtype: 'U8', shape: [hole], data_offsets: [0, hole] } }).padEnd(headerLength, ' ');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerLength));
  return [Buffer.concat([length, Buffer.from(json)]), hole, Buffer.alloc(0)];
}

function mcapLayout(total) {
  const magic = Buffer.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]);
  const record = (opcode, length) => { const b = Buffer.alloc(9); b[0] = opcode; b.writeBigUInt64LE(BigInt(length), 1); return b; };
  const header = Buffer.concat([record(0x01, 8), Buffer.alloc(8)]);
  const footer = Buffer.concat([record(0x02, 20), Buffer.alloc(20), magic]);
  const hole = total - magic.length - header.length - 9 - footer.length;
  return [Buffer.concat([magic, header, record(0x80, hole)]), hole, footer];
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
  ['onnx', 'model.onnx', layout(onnxLayout)],
  ['safetensors', 'model.safetensors', layout(safetensorsLayout)],
  ['mcap', 'run.mcap', layout(mcapLayout)],
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
        await write(file, mib * MiB);
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
        rows.push({ format, file_mib: mib, bytes_read: ranged.read, rss_added_mib: Math.round(((peak - before) / MiB) * 10) / 10, ms: Math.round(ms) });
        fs.rmSync(file);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.table(rows);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
