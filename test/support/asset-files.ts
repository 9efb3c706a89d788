import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { McapWriter, TempBuffer } from '@mcap/core';
import { onnx } from 'onnx-proto';
import { importEsm } from '../../src/inspection/esm';

/**
 * Real files of each published format, made by the format's own writer (onnx-proto's
 * ModelProto encoder, Python's pickle, fflate's zip) or written byte for byte to the
 * format's spec (safetensors), and hostile copies of them, for the inspection tests
 * and for every test that publishes a model.
 */

/** A small MLP policy (obs[batch,4] -> Gemm -> Tanh -> Gemm -> action[batch,2]) encoded by onnx-proto; onnxruntime loads it. */
export function onnxModel(options: { producer?: string; hidden?: number } = {}): Buffer {
  const hidden = options.hidden ?? 8;
  const floats = (n: number, seed: number) => {
    const raw = Buffer.alloc(n * 4);
    for (let i = 0; i < n; i++) raw.writeFloatLE(Math.sin(i + seed) / 4, i * 4);
    return raw;
  };
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const info = (name: string, width: number): onnx.IValueInfoProto => ({
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: 'batch' }, { dimValue: width }] } } },
  });
  const model: onnx.IModelProto = {
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: options.producer ?? 'test-fixture',
    producerVersion: '1',
    graph: {
      name: 'policy',
      node: [
        { opType: 'Gemm', input: ['obs', 'w0', 'b0'], output: ['h0'] },
        { opType: 'Tanh', input: ['h0'], output: ['h1'] },
        { opType: 'Gemm', input: ['h1', 'w1', 'b1'], output: ['action'] },
      ],
      initializer: [
        { name: 'w0', dims: [4, hidden], dataType: FLOAT, rawData: floats(4 * hidden, 1) },
        { name: 'b0', dims: [hidden], dataType: FLOAT, rawData: floats(hidden, 2) },
        { name: 'w1', dims: [hidden, 2], dataType: FLOAT, rawData: floats(hidden * 2, 3) },
        { name: 'b1', dims: [2], dataType: FLOAT, rawData: floats(2, 4) },
      ],
      input: [info('obs', 4)],
      output: [info('action', 2)],
    },
  };
  return Buffer.from(onnx.ModelProto.encode(onnx.ModelProto.fromObject(model)).finish());
}

/** The parameters of onnxModel(): 4*h + h + 2*h + 2. */
export const onnxModelParameters = (hidden = 8) => 4 * hidden + hidden + hidden * 2 + 2;

/** A safetensors file written to the format's spec: u64 LE header length, JSON header, little-endian data. */
export function safetensorsFile(tensors: Record<string, { dtype: 'F32' | 'I64'; shape: number[] }> = { 'fc.weight': { dtype: 'F32', shape: [2, 3] }, 'fc.bias': { dtype: 'F32', shape: [2] } }): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * (t.dtype === 'F32' ? 4 : 8);
    header[name] = { ...t, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, Buffer.alloc(offset, 1)]);
}

/** Runs a Python script and returns what it wrote to stdout (python3 is on CI). */
export function python(script: string): Buffer {
  return execFileSync('python3', ['-c', script], { maxBuffer: 64 * 1024 ** 2 });
}

/**
 * A pickle that runs `command` through os.system when loaded, made by Python's own
 * pickle (protocol 2 writes GLOBAL, protocol 4 STACK_GLOBAL).
 */
export function maliciousPickle(command: string, protocol: 2 | 4): Buffer {
  return python(`
import os, pickle, sys
class Payload:
    def __reduce__(self):
        return (os.system, (${JSON.stringify(command)},))
sys.stdout.buffer.write(pickle.dumps({"state_dict": Payload()}, protocol=${protocol}))`);
}

/**
 * The pickle torch.save writes (a state dict of tensors rebuilt by
 * torch._utils._rebuild_tensor_v2 from persistent storage ids), made by Python's pickle
 * with stand-in torch modules so the import names are the real ones.
 */
export function torchStatePickle(): Buffer {
  return python(`
import collections, pickle, sys, types
torch = types.ModuleType("torch"); utils = types.ModuleType("torch._utils")
sys.modules["torch"] = torch; sys.modules["torch._utils"] = utils
def _rebuild_tensor_v2(*args): pass
_rebuild_tensor_v2.__module__ = "torch._utils"; utils._rebuild_tensor_v2 = _rebuild_tensor_v2
class FloatStorage: pass
FloatStorage.__module__ = "torch"; torch.FloatStorage = FloatStorage
class Storage:
    def __init__(self, key, n): self.key, self.n = key, n
class Tensor:
    def __init__(self, storage, shape): self.storage, self.shape = storage, shape
    def __reduce__(self):
        return (_rebuild_tensor_v2, (self.storage, 0, self.shape, (self.shape[1] if len(self.shape) > 1 else 1, 1), False, collections.OrderedDict()))
class TorchPickler(pickle.Pickler):
    def persistent_id(self, obj):
        return ("storage", FloatStorage, obj.key, "cpu", obj.n) if isinstance(obj, Storage) else None
state = collections.OrderedDict([("fc.weight", Tensor(Storage("0", 6), (2, 3))), ("fc.bias", Tensor(Storage("1", 2), (2,)))])
import io; out = io.BytesIO(); TorchPickler(out, protocol=2).dump(state); sys.stdout.buffer.write(out.getvalue())`);
}

/** torch.save's zip layout around a pickle: archive/data.pkl, the storages, archive/version. */
export function torchCheckpoint(pickle = torchStatePickle()): Buffer {
  return Buffer.from(
    zipSync(
      {
        'archive/data.pkl': [new Uint8Array(pickle), { level: 0 }],
        'archive/data/0': [new Uint8Array(24), { level: 0 }],
        'archive/data/1': [new Uint8Array(8), { level: 0 }],
        'archive/version': [strToU8('3\n'), { level: 0 }],
      },
    ),
  );
}

/** A two-link arm, as URDF. */
export function urdfRobot(name = 'two_link_arm'): string {
  const link = (n: string) => `<link name="${n}"><visual><geometry><mesh filename="package://arm/meshes/${n}.stl"/></geometry></visual><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>`;
  return `<?xml version="1.0"?>
<robot name="${name}">
  ${link('base_link')}${link('link_1')}${link('link_2')}
  <joint name="joint_1" type="revolute"><parent link="base_link"/><child link="link_1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="joint_2" type="prismatic"><parent link="link_1"/><child link="link_2"/><axis xyz="1 0 0"/><limit lower="0" upper="0.3" effort="10" velocity="1"/></joint>
</robot>
`;
}

/**
 * An MCAP file written to the spec (mcap.dev/spec): magic, a Header record, a Footer record
 * with no summary, magic. Records are an opcode, a u64 LE length and their fields. `library`
 * (the Header's writer name) makes distinct recordings.
 */
export function mcapFile(library = 'test-fixture'): Buffer {
  const magic = Buffer.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]);
  const str = (s: string) => { const b = Buffer.alloc(4); b.writeUInt32LE(Buffer.byteLength(s)); return Buffer.concat([b, Buffer.from(s)]); };
  const record = (opcode: number, body: Buffer) => { const head = Buffer.alloc(9); head[0] = opcode; head.writeBigUInt64LE(BigInt(body.length), 1); return Buffer.concat([head, body]); };
  return Buffer.concat([magic, record(0x01, Buffer.concat([str('ros2'), str(library)])), record(0x02, Buffer.alloc(20)), magic]);
}

/** A safetensors file of exactly `size` bytes: one U8 tensor of random bytes, the header padded with spaces (as the spec allows). */
export function safetensorsOfSize(size: number): Buffer {
  const headerLength = 256;
  const n = size - 8 - headerLength;
  const json = JSON.stringify({ data: { dtype: 'U8', shape: [n], data_offsets: [0, n] } }).padEnd(headerLength, ' ');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerLength));
  return Buffer.concat([length, Buffer.from(json), randomBytes(n)]);
}

/** An indexed MCAP recording written by @mcap/core's McapWriter: /joint_states (3 messages, 1 s apart) and /camera (1). */
export async function mcapRecording(): Promise<Buffer> {
  const buffer = new TempBuffer();
  const writer = new McapWriter({ writable: buffer });
  await writer.start({ profile: 'ros2', library: 'test-fixture' });
  const schemaId = await writer.registerSchema({ name: 'sensor_msgs/msg/JointState', encoding: 'ros2msg', data: new TextEncoder().encode('float64[] position') });
  const joints = await writer.registerChannel({ topic: '/joint_states', schemaId, messageEncoding: 'cdr', metadata: new Map() });
  const camera = await writer.registerChannel({ topic: '/camera', schemaId: 0, messageEncoding: 'json', metadata: new Map() });
  const t0 = 1_700_000_000_000_000_000n;
  for (let i = 0; i < 3; i++) await writer.addMessage({ channelId: joints, sequence: i, logTime: t0 + BigInt(i) * 1_000_000_000n, publishTime: t0, data: new Uint8Array([i]) });
  await writer.addMessage({ channelId: camera, sequence: 0, logTime: t0 + 500_000_000n, publishTime: t0, data: new TextEncoder().encode('{}') });
  await writer.end();
  return Buffer.from(buffer.get());
}

/**
 * An episode table as LeRobot keeps one, written by hyparquet-writer (an ES module, loaded
 * with a real import()): `rows` rows in row groups of `rowGroupSize`, columns timestamp
 * (FLOAT), frame_index (INT64), task (STRING) and action_x (DOUBLE).
 */
export async function parquetFile(rows = 50, rowGroupSize = 20): Promise<Buffer> {
  const { parquetWriteBuffer } = await importEsm<typeof import('hyparquet-writer')>('hyparquet-writer');
  const index = Array.from({ length: rows }, (_, i) => i);
  const buffer = parquetWriteBuffer({
    columnData: [
      { name: 'timestamp', data: index.map((i) => i / 30), type: 'FLOAT' },
      { name: 'frame_index', data: index.map((i) => BigInt(i)), type: 'INT64' },
      { name: 'task', data: index.map(() => 'pick the cube'), type: 'STRING' },
      { name: 'action_x', data: index.map((i) => Math.sin(i)), type: 'DOUBLE' },
    ],
    rowGroupSize,
  });
  return Buffer.from(buffer);
}

/**
 * A robomimic-style HDF5 file written by h5wasm (the HDF5 library itself, its Node build
 * writing to a real file): data/demo_0 and data/demo_1, each with actions [steps, 7]
 * float32, obs/joint_pos [steps, 7] float64, rewards [steps] int64, and data's `total` attribute.
 * `loop` adds a hard link data/loop to data: a group that contains itself.
 */
export async function hdf5File(steps = 10, options: { loop?: boolean } = {}): Promise<Buffer> {
  const h5 = await importEsm<typeof import('h5wasm')>('h5wasm/node');
  await h5.ready;
  const dir = mkdtempSync(join(tmpdir(), 'hdf5-fixture-'));
  const path = join(dir, 'demos.hdf5');
  try {
    const f = new h5.File(path, 'w');
    const data = f.create_group('data');
    for (const demo of ['demo_0', 'demo_1']) {
      const g = data.create_group(demo);
      g.create_dataset({ name: 'actions', data: new Float32Array(steps * 7).map((_, i) => Math.sin(i)), shape: [steps, 7], dtype: '<f' });
      g.create_group('obs').create_dataset({ name: 'joint_pos', data: new Float64Array(steps * 7), shape: [steps, 7], dtype: '<d' });
      g.create_dataset({ name: 'rewards', data: new BigInt64Array(steps), shape: [steps], dtype: '<q' });
    }
    data.create_attribute('total', steps * 2);
    if (options.loop) data.create_hard_link('/data', 'loop'); // data/loop is data itself: a cycle
    f.close();
    return readFileSync(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A ROS 1 bag written byte for byte to the format's spec (wiki.ros.org/Bags/Format/2.0;
 * no maintained writer is on npm): the magic, a bag header record padded to 4096 bytes, one
 * uncompressed chunk per `chunkSize` messages holding the connection and message data records,
 * its index data records, then the index section (connection records, chunk infos) that the
 * header points to. Messages are std_msgs/String (uint32 length + bytes).
 * `indexed: false` writes a bag as a recorder leaves it when killed (index_pos 0, no index).
 */
export function rosbagFile(topics: { topic: string; messages: { sec: number; text: string }[] }[] = [
  { topic: '/chatter', messages: [{ sec: 100, text: 'a' }, { sec: 101, text: 'b' }, { sec: 102, text: 'c' }] },
  { topic: '/status', messages: [{ sec: 100, text: 'ok' }, { sec: 104, text: 'ok' }] },
], options: { indexed?: boolean; chunkSize?: number } = {}): Buffer {
  const i32 = (n: number) => { const b = Buffer.alloc(4); b.writeInt32LE(n); return b; };
  const u64 = (n: number) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
  const time = (sec: number, nsec = 0) => { const b = Buffer.alloc(8); b.writeUInt32LE(sec); b.writeUInt32LE(nsec, 4); return b; };
  const fieldsOf = (fields: Record<string, Buffer | string>) => Buffer.concat(Object.entries(fields).map(([k, v]) => {
    const body = Buffer.concat([Buffer.from(`${k}=`), typeof v === 'string' ? Buffer.from(v) : v]);
    return Buffer.concat([i32(body.length), body]);
  }));
  const record = (fields: Record<string, Buffer | string>, data: Buffer) => { const h = fieldsOf(fields); return Buffer.concat([i32(h.length), h, i32(data.length), data]); };
  const op = (n: number) => Buffer.from([n]);
  const definition = 'string data\n';
  const md5sum = '992ce8a1687cec8c8bd883ec73ca41d1';
  const connection = (conn: number, topic: string) => record({ op: op(0x07), conn: i32(conn), topic }, fieldsOf({ topic, type: 'std_msgs/String', md5sum, message_definition: definition }));

  const events = topics.flatMap(({ messages }, conn) => messages.map((m) => ({ conn, ...m }))).sort((a, b) => a.sec - b.sec);
  const chunkSize = options.chunkSize ?? 1000;
  const magic = Buffer.from('#ROSBAG V2.0\n');
  const body: Buffer[] = [];
  let position = magic.length + 4096;
  const chunkInfos: Buffer[] = [];
  for (let start = 0; start < events.length; start += chunkSize) {
    const slice = events.slice(start, start + chunkSize);
    const parts: Buffer[] = [];
    let offset = 0;
    const seen = new Set<number>();
    const index = new Map<number, { sec: number; offset: number }[]>();
    for (const e of slice) {
      if (!seen.has(e.conn)) {
        seen.add(e.conn);
        const c = connection(e.conn, topics[e.conn].topic);
        parts.push(c);
        offset += c.length;
      }
      const text = Buffer.from(e.text);
      const m = record({ op: op(0x02), conn: i32(e.conn), time: time(e.sec) }, Buffer.concat([i32(text.length), text]));
      index.set(e.conn, [...(index.get(e.conn) ?? []), { sec: e.sec, offset }]);
      parts.push(m);
      offset += m.length;
    }
    const data = Buffer.concat(parts);
    const chunk = record({ op: op(0x05), compression: 'none', size: i32(data.length) }, data);
    const indexes = [...index].map(([conn, entries]) => record({ op: op(0x04), ver: i32(1), conn: i32(conn), count: i32(entries.length) }, Buffer.concat(entries.map((e) => Buffer.concat([time(e.sec), i32(e.offset)])))));
    chunkInfos.push(record(
      { op: op(0x06), ver: i32(1), chunk_pos: u64(position), start_time: time(slice[0].sec), end_time: time(slice[slice.length - 1].sec), count: i32(index.size) },
      Buffer.concat([...index].map(([conn, entries]) => Buffer.concat([i32(conn), i32(entries.length)]))),
    ));
    body.push(chunk, ...indexes);
    position += chunk.length + indexes.reduce((n, b) => n + b.length, 0);
  }
  const indexed = options.indexed ?? true;
  const header = record({ op: op(0x03), index_pos: u64(indexed ? position : 0), conn_count: i32(indexed ? topics.length : 0), chunk_count: i32(indexed ? chunkInfos.length : 0) }, Buffer.alloc(0));
  // The bag header record is padded (its data) with spaces to 4096 bytes, so it can be rewritten in place.
  const padded = record({ op: op(0x03), index_pos: u64(indexed ? position : 0), conn_count: i32(indexed ? topics.length : 0), chunk_count: i32(indexed ? chunkInfos.length : 0) }, Buffer.alloc(4096 - header.length, 0x20));
  const index = indexed ? [...topics.map((t, conn) => connection(conn, t.topic)), ...chunkInfos] : [];
  return Buffer.concat([magic, padded, ...body, ...index]);
}

/** A .npy written by NumPy's np.save: `expression` is a NumPy expression for the array. */
export function npyFile(expression = "numpy.arange(12, dtype='<f4').reshape(3, 4)"): Buffer {
  return python(`import io, sys, numpy\nb = io.BytesIO()\nnumpy.save(b, ${expression}, allow_pickle=True)\nsys.stdout.buffer.write(b.getvalue())`);
}

/**
 * A TFRecord file written to TensorFlow's framing (u64 length, masked CRC-32C of it, data,
 * masked CRC-32C of the data) by a Python writer with its own bitwise CRC-32C (TensorFlow
 * is not installed here), independent of the inspector's table-driven one.
 */
export function tfrecordFile(records: string[] = ['first example', 'second', '']): Buffer {
  return python(`import struct, sys, json
def crc32c(data):
    crc = 0xffffffff
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xffffffff
def masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xa282ead8) & 0xffffffff
out = b''
for text in json.loads(${JSON.stringify(JSON.stringify(records))}):
    data = text.encode()
    length = struct.pack('<Q', len(data))
    out += length + struct.pack('<I', masked(length)) + data + struct.pack('<I', masked(data))
sys.stdout.buffer.write(out)`);
}

/**
 * A ROS 2 bag in rosbag2's SQLite storage, written by SQLite itself (sql.js) with rosbag2's
 * schema (schema, metadata, topics, messages, timestamp_idx as rosbag2 Jazzy creates them):
 * /joint_states 3 messages and /camera 1, from 1,700,000,000 s over 2 s.
 */
export async function db3File(): Promise<Buffer> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const SQL = await (require('sql.js') as () => Promise<any>)();
  const db = new SQL.Database();
  db.exec(`
    CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
    CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL, metadata TEXT NOT NULL);
    CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL, type_description_hash TEXT NOT NULL);
    CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, data BLOB NOT NULL);
    CREATE INDEX timestamp_idx ON messages (timestamp ASC);
    INSERT INTO schema VALUES (4, 'jazzy');
    INSERT INTO topics VALUES (1, '/joint_states', 'sensor_msgs/msg/JointState', 'cdr', '', ''), (2, '/camera', 'sensor_msgs/msg/Image', 'cdr', '', '');
  `);
  const insert = db.prepare('INSERT INTO messages (topic_id, timestamp, data) VALUES (?, ?, ?)');
  const base = 1_700_000_000_000_000_000n;
  for (const [topic, offsetNs] of [[1, 0n], [1, 1_000_000_000n], [2, 1_500_000_000n], [1, 2_000_000_000n]] as const) {
    insert.run([topic, (base + offsetNs).toString(), new Uint8Array([0, 1, 0, 0, 42])]);
  }
  insert.free();
  const bytes = Buffer.from(db.export());
  db.close();
  return bytes;
}

/**
 * The metadata.yaml rosbag2 (Jazzy, version 9) writes beside a bag's .db3 files, for the bag
 * db3File() holds: its topics with message counts, start and duration, the files it lists.
 */
export function rosbag2MetadataYaml(files = ['run_0.db3']): string {
  const qos = `- history: keep_last
            depth: 10
            reliability: reliable
            durability: volatile
            deadline:
              sec: 9223372036
              nsec: 854775807
            lifespan:
              sec: 9223372036
              nsec: 854775807
            liveliness: automatic
            liveliness_lease_duration:
              sec: 9223372036
              nsec: 854775807
            avoid_ros_namespace_conventions: false`;
  return `rosbag2_bagfile_information:
  version: 9
  storage_identifier: sqlite3
  duration:
    nanoseconds: 2000000000
  starting_time:
    nanoseconds_since_epoch: 1700000000000000000
  message_count: 4
  topics_with_message_count:
    - topic_metadata:
        name: /joint_states
        type: sensor_msgs/msg/JointState
        serialization_format: cdr
        offered_qos_profiles:
          ${qos}
        type_description_hash: RIHS01_a0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1
      message_count: 3
    - topic_metadata:
        name: /camera
        type: sensor_msgs/msg/Image
        serialization_format: cdr
        offered_qos_profiles:
          ${qos}
        type_description_hash: RIHS01_b0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1
      message_count: 1
  compression_format: ""
  compression_mode: ""
  relative_file_paths:
${files.map((f) => `    - ${f}`).join('\n')}
  files:
${files.map((f) => `    - path: ${f}
      starting_time:
        nanoseconds_since_epoch: 1700000000000000000
      duration:
        nanoseconds: 2000000000
      message_count: 4`).join('\n')}
  custom_data: ~
  ros_distro: jazzy
`;
}
