#!/usr/bin/env node
/**
 * Issue 40: what inspecting a published file costs as the file grows. For each format and
 * size, a real file is written to a local blob store (the bulk of it as a sparse hole: an
 * ONNX initializer's raw_data, safetensors data, an MCAP private record), then inspected
 * through the store's ranged reads; reported: bytes read and the RSS the inspection added.
 * Flat bytes read and RSS across sizes mean the inspection never reads the whole file.
 *
 *   npm run build && node --expose-gc bench/inspection.js [--sizes 64,512,2048]   (MiB)
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

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inspection-bench-'));
  const store = new LocalBlobStore(dir, 'http://127.0.0.1');
  const rows = [];
  try {
    for (const [format, name, layout] of [['onnx', 'model.onnx', onnxLayout], ['safetensors', 'model.safetensors', safetensorsLayout], ['mcap', 'run.mcap', mcapLayout]]) {
      for (const mib of sizes) {
        const [prefix, hole, suffix] = layout(mib * MiB);
        const key = `bench/${mib}-${name}`;
        const file = path.join(dir, 'blobs', key);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        const fd = fs.openSync(file, 'w');
        fs.writeSync(fd, prefix, 0, prefix.length, 0);
        fs.ftruncateSync(fd, prefix.length + hole + suffix.length);
        fs.writeSync(fd, suffix, 0, suffix.length, prefix.length + hole);
        fs.closeSync(fd);
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
