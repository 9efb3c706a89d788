import { Bag } from '@foxglove/rosbag';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { inspectFiles } from '../../src/catalog/published-files';
import { LocalBlobStore } from '../../src/storage/local-blob-store';
import { DEFAULT_LIMITS, InspectionLimits } from '../../src/inspection/inspection';
import { InspectionContext, RangedFile } from '../../src/inspection/ranged-file';
import { inspectFile, InspectionOutcome } from '../../src/inspection/registry';
import { crc32c } from '../../src/inspection/formats/tfrecord';
import { datasetLayout, LayoutFile, missingLeRobotEpisodes } from '../../src/inspection/layout';
import { db3File, hdf5File, mcapRecording, npyFile, onnxModel, parquetFile, rosbag2MetadataYaml, rosbagFile, tfrecordFile } from '../support/asset-files';

/**
 * Parquet (hyparquet), HDF5 (h5wasm) and ROS 1 bags (@foxglove/rosbag) inspected from files
 * written by each format's writer (hyparquet-writer, h5wasm, the bag spec byte for byte),
 * and truncated, mislabelled and corrupt copies of them (issue 40); NumPy .npy (np.save)
 * and TFRecord framing (issue 41).
 */
const inspect = (name: string, bytes: Uint8Array, limits: InspectionLimits = DEFAULT_LIMITS): Promise<InspectionOutcome> => inspectFile(RangedFile.ofBytes(name, bytes, limits));

/** Inspects through a RangedFile that counts its reads. */
async function inspectCounting(name: string, bytes: Uint8Array, limits: InspectionLimits = DEFAULT_LIMITS) {
  const file = RangedFile.ofBytes(name, bytes, limits);
  return { outcome: await inspectFile(file), read: file.read };
}

async function passes(name: string, bytes: Uint8Array) {
  const outcome = await inspect(name, bytes);
  if (!outcome.ok) throw new Error(`expected ${name} to pass: ${outcome.problem.message}`);
  return outcome.inspection;
}

async function fails(name: string, bytes: Uint8Array, limits?: InspectionLimits) {
  const started = Date.now();
  const outcome = await inspect(name, bytes, limits);
  expect(Date.now() - started).toBeLessThan(5000);
  if (outcome.ok) throw new Error(`expected ${name} to fail, got ${JSON.stringify(outcome.inspection)}`);
  expect(outcome.problem.message).toContain(`"${name}"`);
  return outcome.problem;
}

describe('Parquet', () => {
  test('a file written by hyparquet-writer shows its columns with types, rows and row groups', async () => {
    expect(await passes('episode_000000.parquet', await parquetFile(50, 20))).toEqual({
      format: 'parquet',
      created_by: expect.stringMatching(/hyparquet/),
      rows: 50,
      row_groups: 3,
      columns: [
        { name: 'timestamp', type: 'FLOAT', logical_type: null, repetition: 'OPTIONAL' },
        { name: 'frame_index', type: 'INT64', logical_type: null, repetition: 'OPTIONAL' },
        // hyparquet-writer marks strings with the (legacy) converted type UTF8, which is what is shown.
        { name: 'task', type: 'BYTE_ARRAY', logical_type: 'UTF8', repetition: 'OPTIONAL' },
        { name: 'action_x', type: 'DOUBLE', logical_type: null, repetition: 'OPTIONAL' },
      ],
      footer_bytes: expect.any(Number),
    });
  });

  test('only the footer is read: the column chunks of a larger file are not', async () => {
    const file = await parquetFile(200_000, 50_000);
    const { outcome, read } = await inspectCounting('big.parquet', file);
    expect(outcome).toMatchObject({ ok: true, inspection: { rows: 200_000, row_groups: 4 } });
    expect(file.length).toBeGreaterThan(1024 * 1024);
    expect(read).toBeLessThanOrEqual(64 * 1024 + 12);
  });

  test('a truncated file fails naming the file', async () => {
    const file = await parquetFile();
    expect((await fails('episode.parquet', file.subarray(0, file.length - 10))).message).toMatch(/^"episode\.parquet" is not a Parquet file: .*truncated/);
  });

  test('a corrupt footer (its length pointing past the start, its thrift garbage) fails with what hyparquet said', async () => {
    const file = Buffer.from(await parquetFile());
    const long = Buffer.from(file);
    long.writeUInt32LE(file.length, file.length - 8);
    expect((await fails('a.parquet', long)).message).toMatch(/its footer claims \d+ bytes, more than the file holds/);
    const garbage = Buffer.from(file);
    const footer = garbage.readUInt32LE(garbage.length - 8);
    garbage.fill(0xff, garbage.length - 8 - footer, garbage.length - 8);
    expect((await fails('a.parquet', garbage)).message).toMatch(/^"a\.parquet" is not a Parquet file: its footer cannot be read: /);
  });

  test('an ONNX model and an MCAP recording named .parquet fail', async () => {
    expect((await fails('data.parquet', onnxModel())).message).toMatch(/does not start with the Parquet magic PAR1/);
    expect((await fails('data.parquet', await mcapRecording())).message).toMatch(/Parquet magic/);
  });

  test('a footer larger than the read limit fails on the limit, without reading it', async () => {
    const file = await parquetFile(50, 1); // 50 row groups: a footer of several KiB
    const problem = await fails('a.parquet', file, { maxReadBytes: 1024, timeMs: 10_000 });
    expect(problem.code).toBe('inspection_limit_exceeded');
  });
});

describe('HDF5', () => {
  test('a file written by h5wasm shows its group/dataset tree with shapes and dtypes', async () => {
    const inspection = await passes('demos.hdf5', await hdf5File(10));
    expect(inspection).toMatchObject({ format: 'hdf5', superblock_version: expect.any(Number), superblock_offset: 0, objects: 11, complete: true });
    expect(inspection.tree).toEqual([
      { path: '/data', type: 'group' },
      { path: '/data/demo_0', type: 'group' },
      { path: '/data/demo_1', type: 'group' },
      { path: '/data/demo_0/actions', type: 'dataset', shape: [10, 7], dtype: '<f4', chunks: null },
      { path: '/data/demo_0/obs', type: 'group' },
      { path: '/data/demo_0/rewards', type: 'dataset', shape: [10], dtype: '<i8', chunks: null },
      { path: '/data/demo_1/actions', type: 'dataset', shape: [10, 7], dtype: '<f4', chunks: null },
      { path: '/data/demo_1/obs', type: 'group' },
      { path: '/data/demo_1/rewards', type: 'dataset', shape: [10], dtype: '<i8', chunks: null },
      { path: '/data/demo_0/obs/joint_pos', type: 'dataset', shape: [10, 7], dtype: '<f8', chunks: null },
      { path: '/data/demo_1/obs/joint_pos', type: 'dataset', shape: [10, 7], dtype: '<f8', chunks: null },
    ]);
  });

  test('a file larger than a block is read by 64 KiB blocks: its metadata, not its data', async () => {
    const file = await hdf5File(40_000); // ~ 5 MiB of data
    expect(file.length).toBeGreaterThan(4 * 1024 * 1024);
    const { outcome, read } = await inspectCounting('big.h5', file);
    if (!outcome.ok) throw new Error(outcome.problem.message);
    expect(outcome.inspection).toMatchObject({ objects: 11, complete: true });
    expect((outcome.inspection.tree as { path: string; shape?: number[] }[]).find((e) => e.path === '/data/demo_1/actions')?.shape).toEqual([40_000, 7]);
    expect(read).toBeLessThan(file.length / 4);
  });

  test('a truncated file fails with what HDF5 said, naming the file', async () => {
    const file = await hdf5File(10);
    expect((await fails('demos.h5', file.subarray(0, Math.floor(file.length / 2)))).message).toMatch(/^"demos\.h5" is not an HDF5 file: HDF5 cannot read it: truncated file/);
  });

  test('a superblock signature followed by garbage fails; a Parquet file named .hdf5 fails on the signature', async () => {
    const garbage = Buffer.concat([Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(4000, 0xa5)]);
    expect((await fails('a.hdf5', garbage)).message).toMatch(/HDF5 cannot read it: /);
    expect((await fails('a.hdf5', await parquetFile())).message).toMatch(/no HDF5 superblock signature/);
  });

  test('a group that contains itself (a hard link cycle) is walked to the depth bound, not for ever', async () => {
    const inspection = await passes('loop.h5', await hdf5File(2, { loop: true }));
    expect(inspection).toMatchObject({ format: 'hdf5', complete: false });
    const paths = (inspection.tree as { path: string }[]).map((e) => e.path);
    expect(paths).toContain('/data/loop/loop/demo_0');
    expect(Math.max(...paths.map((p) => p.split('/').length - 1))).toBeLessThanOrEqual(32);
  });

  test('a file needing more reads than the limit fails on the limit', async () => {
    const file = await hdf5File(40_000);
    expect((await fails('big.h5', file, { maxReadBytes: 64 * 1024, timeMs: 10_000 })).code).toBe('inspection_limit_exceeded');
  });

  test('inspections running at once each read their own file', async () => {
    const [a, b] = await Promise.all([hdf5File(40_000), hdf5File(3)]);
    const [ia, ib] = await Promise.all([passes('a.h5', a), passes('b.h5', b)]);
    expect((ia.tree as { path: string; shape?: number[] }[]).find((e) => e.path === '/data/demo_0/actions')?.shape).toEqual([40_000, 7]);
    expect((ib.tree as { path: string; shape?: number[] }[]).find((e) => e.path === '/data/demo_0/actions')?.shape).toEqual([3, 7]);
  });
});

describe('ROS 1 bags', () => {
  test('the fixture is a bag @foxglove/rosbag reads message by message (the writer follows the spec)', async () => {
    const bytes = rosbagFile();
    const bag = new Bag({ size: () => bytes.length, read: async (offset: number, length: number) => bytes.subarray(offset, offset + length) });
    await bag.open();
    const read: string[] = [];
    for await (const m of bag.messageIterator()) read.push(`${m.topic}:${(m.message as { data: string }).data}`);
    expect(read).toEqual(['/chatter:a', '/status:ok', '/chatter:b', '/chatter:c', '/status:ok']);
  });

  test('a bag shows its topics with types and message counts, start, end and duration, without reading a chunk', async () => {
    const bytes = rosbagFile(undefined, { chunkSize: 2 });
    const { outcome, read } = await inspectCounting('run.bag', bytes);
    expect(outcome).toEqual({
      ok: true,
      inspection: {
        format: 'rosbag', version: '2.0', indexed: true, chunks: 3, messages: 5,
        start: '1970-01-01T00:01:40.000Z', end: '1970-01-01T00:01:44.000Z', duration_s: 4,
        topics: [
          { topic: '/chatter', type: 'std_msgs/String', md5sum: '992ce8a1687cec8c8bd883ec73ca41d1', connections: 1, messages: 3 },
          { topic: '/status', type: 'std_msgs/String', md5sum: '992ce8a1687cec8c8bd883ec73ca41d1', connections: 1, messages: 2 },
        ],
      },
    });
    // The magic, the header record's 4 KiB, and the index section; the chunks are skipped.
    const indexStart = bytes.readBigUInt64LE(bytes.indexOf('index_pos=') + 'index_pos='.length);
    expect(Number(indexStart)).toBeGreaterThan(13 + 4096);
    expect(read).toBeLessThanOrEqual(13 * 2 + 4096 + (bytes.length - Number(indexStart)));
  });

  test('a bag left without its index by a killed recorder passes as unindexed', async () => {
    expect(await passes('crash.bag', rosbagFile(undefined, { indexed: false }))).toEqual({ format: 'rosbag', version: '2.0', indexed: false });
  });

  test('a truncated bag (its index cut off) fails naming the file', async () => {
    const bytes = rosbagFile();
    expect((await fails('run.bag', bytes.subarray(0, bytes.length - 60))).message).toMatch(/^"run\.bag" is not a ROS 1 bag: its index cannot be read: /);
    expect((await fails('run.bag', bytes.subarray(0, 2000))).message).toMatch(/^"run\.bag" is not a ROS 1 bag: its index would start at byte \d+, past the end of the file \(2000 bytes\): truncated/);
    const corrupt = Buffer.from(bytes);
    corrupt.writeInt32LE(0x7fffffff, 13); // the header record's header length
    expect((await fails('run.bag', corrupt)).message).toMatch(/^"run\.bag" is not a ROS 1 bag: its bag header cannot be read: /);
  });

  test('an MCAP recording and an HDF5 file named .bag fail on the magic', async () => {
    expect((await fails('run.bag', await mcapRecording())).message).toMatch(/does not start with "#ROSBAG V2.0"/);
    expect((await fails('run.bag', await hdf5File(2))).message).toMatch(/does not start with "#ROSBAG V2.0"/);
  });
});

describe('NumPy .npy', () => {
  test('arrays written by np.save show dtype and shape (format 1.0 and 3.0, a scalar, Fortran order)', async () => {
    expect(await passes('obs.npy', npyFile())).toEqual({ format: 'npy', version: '1.0', dtype: '<f4', shape: [3, 4], fortran_order: false, elements: 12 });
    expect(await passes('s.npy', npyFile("numpy.float64(2.5)"))).toMatchObject({ dtype: '<f8', shape: [], elements: 1 });
    expect(await passes('f.npy', npyFile("numpy.asfortranarray(numpy.zeros((2, 3), dtype='<i8'))"))).toMatchObject({ dtype: '<i8', shape: [2, 3], fortran_order: true });
    // A field name outside latin-1 makes NumPy write format 3.0 (a utf-8 header, a u32 length).
    expect(await passes('r.npy', npyFile("numpy.zeros(2, dtype=[('\\u4e2d', '<f4')])"))).toMatchObject({ version: '3.0', shape: [2] });
  });

  test('a truncated array, a header not a dict, and text named .npy fail naming the file', async () => {
    const file = npyFile();
    expect((await fails('obs.npy', file.subarray(0, file.length - 4))).message).toMatch(/^"obs\.npy" is not a NumPy \.npy array: its header says 3×4 of <f4 \(48 bytes of data\) but the file holds 44: truncated/);
    const broken = Buffer.from(file.toString('latin1').replace("'shape': (3, 4)", "'shape': [3, 4]"), 'latin1');
    expect((await fails('obs.npy', broken)).message).toMatch(/its header is not a dict with 'descr', 'fortran_order' and 'shape'/);
    expect((await fails('obs.npy', Buffer.from('0.1 0.2 0.3\n'))).message).toMatch(/does not start with the NumPy magic/);
  });

  test('an array of Python objects (a pickle inside) is refused, never loaded', async () => {
    const problem = await fails('objs.npy', npyFile("numpy.array([{'a': 1}, None], dtype=object)"));
    expect(problem).toEqual({ code: 'unsafe_pickle', message: expect.stringMatching(/^"objs\.npy" was refused: it is an array of Python objects/) });
  });
});

describe('TFRecord', () => {
  test('CRC-32C matches its check value (RFC 3720: "123456789" -> 0xE3069283)', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  test('a file framed as TensorFlow writes it shows its records, every CRC checked', async () => {
    expect(await passes('train.tfrecord', tfrecordFile())).toEqual({ format: 'tfrecord', records: 3, records_checked: 3, data_bytes: 19, data_crc_checked: true, complete: true });
  });

  test('a flipped data byte, a truncated record and a JSONL file named .tfrecord fail naming the file', async () => {
    const file = Buffer.from(tfrecordFile());
    const flipped = Buffer.from(file);
    flipped[14] ^= 1;
    expect((await fails('train.tfrecord', flipped)).message).toMatch(/^"train\.tfrecord" is not a TFRecord file: record 1 at byte 0: its data's CRC does not match/);
    expect((await fails('train.tfrecord', file.subarray(0, file.length - 3))).message).toMatch(/record 3 at byte \d+ claims 0 bytes, past the end of the file: truncated/);
    expect((await fails('train.tfrecord', Buffer.from('{"a":1}\n{"a":2}\n{"a":3}\n'))).message).toMatch(/its length's CRC does not match/);
  });

  test('a file above the read limit is walked by its frames, the data stepped over', async () => {
    const records = Array.from({ length: 40 }, (_, i) => `record ${i} `.repeat(200));
    const file = tfrecordFile(records);
    const { outcome, read } = await inspectCounting('big.tfrecord', file, { maxReadBytes: 16 * 1024, timeMs: 10_000 });
    expect(outcome).toEqual({ ok: true, inspection: { format: 'tfrecord', records: 40, records_checked: 40, data_bytes: file.length - 40 * 16, data_crc_checked: false, complete: true } });
    expect(read).toBe(40 * 12);
  });
});

describe('ROS 2 bags (.db3)', () => {
  test('a bag in rosbag2 SQLite storage, written by SQLite, shows its topics with message counts, start, end and duration', async () => {
    expect(await passes('run.db3', await db3File())).toEqual({
      format: 'ros2_db3', opened: true, ros_distro: 'jazzy', messages: 4,
      start: '2023-11-14T22:13:20.000Z', end: '2023-11-14T22:13:22.000Z', duration_s: 2,
      topics: [
        { topic: '/joint_states', type: 'sensor_msgs/msg/JointState', serialization_format: 'cdr', messages: 3 },
        { topic: '/camera', type: 'sensor_msgs/msg/Image', serialization_format: 'cdr', messages: 1 },
      ],
    });
  });

  test('a truncated database, an SQLite file that is not a bag, and an MCAP named .db3 fail naming the file', async () => {
    const file = await db3File();
    expect((await fails('run.db3', file.subarray(0, 3000))).message).toMatch(/^"run\.db3" is not a ROS 2 bag \(SQLite\): SQLite cannot read it: /);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const SQL = await (require('sql.js') as () => Promise<any>)();
    const other = new SQL.Database();
    other.exec('CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)');
    expect((await fails('run.db3', Buffer.from(other.export()))).message).toMatch(/it is an SQLite database but not a ROS 2 bag: it has no topics table/);
    expect((await fails('run.db3', await mcapRecording())).message).toMatch(/it is not an SQLite database/);
  });

  // Above the read limit (here 12 KiB; the bag has 6 pages of 4 KiB): not opened, read by ranges.
  const SMALL: InspectionLimits = { maxReadBytes: 12 * 1024, timeMs: 10_000 };
  const withSiblings = (files: Record<string, Uint8Array>): InspectionContext => ({ sibling: (name) => (files[name] ? RangedFile.ofBytes(name, files[name], SMALL) : undefined) });

  test('a database above the read limit, alone: its header, schema page and topics page by ranged reads; what was not read is said', async () => {
    const file = await db3File();
    expect(file.length).toBeGreaterThan(SMALL.maxReadBytes);
    const ranged = RangedFile.ofBytes('bag/run_0.db3', file, SMALL);
    const outcome = await inspectFile(ranged);
    expect(outcome).toEqual({
      ok: true,
      inspection: {
        format: 'ros2_db3', opened: false, source: 'sqlite_header', page_size: 4096, pages: file.length / 4096, text_encoding: 'UTF-8', sqlite_version: expect.stringMatching(/^3\.\d+\.\d+$/),
        tables: ['schema', 'metadata', 'topics', 'messages'],
        messages: null, start: null, end: null, duration_s: null,
        topics: [
          { topic: '/joint_states', type: 'sensor_msgs/msg/JointState', serialization_format: 'cdr', messages: null },
          { topic: '/camera', type: 'sensor_msgs/msg/Image', serialization_format: 'cdr', messages: null },
        ],
        read: ['the SQLite header', 'page 1 (the schema)', 'the topics table'],
        not_read: [expect.stringMatching(/^the database's pages \(\d+ bytes, more than the 12288 a file may be read\): it was not opened with SQLite$/), expect.stringMatching(/the messages table: message counts, start, end and duration are not known/)],
      },
    });
    // The magic, the header, page 1 and the topics page: a fixed few KiB whatever the bag holds.
    expect(ranged.read).toBe(16 + 100 + 2 * 4096);
  });

  test("with rosbag2's metadata.yaml beside it (as a bag's folder holds it): topics with message counts, start, end and duration from it", async () => {
    const outcome = await inspectFile(RangedFile.ofBytes('bag/run_0.db3', await db3File(), SMALL), withSiblings({ 'bag/metadata.yaml': Buffer.from(rosbag2MetadataYaml()) }));
    expect(outcome).toMatchObject({
      ok: true,
      inspection: {
        format: 'ros2_db3', opened: false, source: 'metadata.yaml', storage_identifier: 'sqlite3', bag_files: 1, tables: ['schema', 'metadata', 'topics', 'messages'],
        messages: 4, start: '2023-11-14T22:13:20.000Z', end: '2023-11-14T22:13:22.000Z', duration_s: 2,
        topics: [
          { topic: '/joint_states', type: 'sensor_msgs/msg/JointState', serialization_format: 'cdr', messages: 3 },
          { topic: '/camera', type: 'sensor_msgs/msg/Image', serialization_format: 'cdr', messages: 1 },
        ],
        file: { messages: 4, start: '2023-11-14T22:13:20.000Z', duration_s: 2 },
        read: ['the SQLite header', 'page 1 (the schema)', 'the topics table', "metadata.yaml beside it (rosbag2's summary of the bag)"],
      },
    });
    // What the metadata says agrees with what SQLite counts when the same file is opened whole.
    const opened = await passes('run_0.db3', await db3File());
    expect(opened).toMatchObject({ messages: 4, start: '2023-11-14T22:13:20.000Z', duration_s: 2 });
  });

  test('a metadata.yaml that does not list the file, or is not YAML, is not used, and says why', async () => {
    const db3 = await db3File();
    const other = await inspectFile(RangedFile.ofBytes('bag/run_0.db3', db3, SMALL), withSiblings({ 'bag/metadata.yaml': Buffer.from(rosbag2MetadataYaml(['other_0.db3'])) }));
    expect(other).toMatchObject({ ok: true, inspection: { source: 'sqlite_header', messages: null } });
    expect((other as any).inspection.not_read).toContain('metadata.yaml beside it was not used: its relative_file_paths do not list run_0.db3');
    const broken = await inspectFile(RangedFile.ofBytes('bag/run_0.db3', db3, SMALL), withSiblings({ 'bag/metadata.yaml': Buffer.from('rosbag2_bagfile_information: [unclosed') }));
    expect((broken as any).inspection.not_read.at(-1)).toMatch(/^metadata.yaml beside it was not used: it is not YAML/);
    // Only the bag's own folder counts: a metadata.yaml elsewhere is not its.
    const elsewhere = await inspectFile(RangedFile.ofBytes('bag/run_0.db3', db3, SMALL), withSiblings({ 'metadata.yaml': Buffer.from(rosbag2MetadataYaml()) }));
    expect(elsewhere).toMatchObject({ ok: true, inspection: { source: 'sqlite_header' } });
  });

  test('above the read limit: a truncated database, a corrupt header and an SQLite file that is not a bag fail naming the file', async () => {
    const file = await db3File();
    const truncated = await inspectFile(RangedFile.ofBytes('run.db3', file.subarray(0, 20_000), SMALL));
    expect(truncated).toEqual({ ok: false, problem: { code: 'invalid_format', message: expect.stringMatching(/^"run\.db3" is not a ROS 2 bag \(SQLite\): its SQLite header counts 6 pages of 4096 bytes \(24576 bytes\), the file has 20000: it is truncated$/) } });
    const corrupt = Buffer.from(file);
    corrupt.writeUInt16BE(1000, 16);
    expect(await inspectFile(RangedFile.ofBytes('run.db3', corrupt, SMALL))).toMatchObject({ ok: false, problem: { message: expect.stringMatching(/page size of 1000, which SQLite never writes/) } });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const SQL = await (require('sql.js') as () => Promise<any>)();
    const other = new SQL.Database();
    other.exec(`CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, '${'x'.repeat(3000)}'), (2, '${'y'.repeat(3000)}'), (3, '${'z'.repeat(3000)}'), (4, '${'w'.repeat(3000)}'), (5, '${'v'.repeat(3000)}');`);
    const users = Buffer.from(other.export());
    expect(users.length).toBeGreaterThan(SMALL.maxReadBytes);
    expect(await inspectFile(RangedFile.ofBytes('run.db3', users, SMALL))).toMatchObject({ ok: false, problem: { message: expect.stringMatching(/it is an SQLite database but not a ROS 2 bag: it has no topics table/) } });
  });

  test('published together in a dataset: the worker hands the .db3 its folder\'s metadata.yaml from the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'db3-'));
    try {
      const store = new LocalBlobStore(dir, 'http://127.0.0.1');
      const put = async (name: string, bytes: Uint8Array) => {
        await store.write(`datasets/${name}`, Readable.from([Buffer.from(bytes)]), 1024 ** 2);
        return { name, path: `datasets/${name}`, size: bytes.length, sha256: '' };
      };
      const files = [await put('bag/run_0.db3', await db3File()), await put('bag/metadata.yaml', Buffer.from(rosbag2MetadataYaml()))];
      const { files: inspected, problems } = await inspectFiles(store, files, SMALL);
      expect(problems).toEqual([]);
      expect(inspected[0].inspection).toMatchObject({ format: 'ros2_db3', source: 'metadata.yaml', messages: 4 });
      expect(inspected[1].inspection).toMatchObject({ format: 'yaml' });
      expect(datasetLayout(inspected)).toMatchObject({ kind: 'rosbag', recordings: 1, duration_s: 2, topics: [{ topic: '/joint_states', messages: 3 }, { topic: '/camera', messages: 1 }] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dataset layouts', () => {
  const inspected = async (files: [string, Uint8Array | string][]): Promise<LayoutFile[]> =>
    Promise.all(files.map(async ([name, bytes]) => {
      const outcome = await inspect(name, typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
      if (!outcome.ok) throw new Error(outcome.problem.message);
      return { name, inspection: outcome.inspection };
    }));

  test('RLDS: a TFDS dataset_info.json with TFRecord shards shows its splits and episodes', async () => {
    const info = JSON.stringify({ name: 'bridge', version: '1.0.0', splits: [{ name: 'train', shardLengths: ['3', '2'] }, { name: 'val', shardLengths: ['1'] }] });
    const files = await inspected([['1.0.0/dataset_info.json', info], ['1.0.0/bridge-train.tfrecord-00000-of-00001', tfrecordFile()], ['1.0.0/features.json', '{"type":"tensorflow_datasets.core.features.features_dict.FeaturesDict"}']]);
    expect(datasetLayout(files)).toEqual({ kind: 'rlds', name: 'bridge', splits: [{ name: 'train', episodes: 5 }, { name: 'val', episodes: 1 }], episodes: 6, tfrecord_files: 1 });
  });

  test('rosbag: recordings of any of the three formats, topics and messages added up', async () => {
    const files = await inspected([['a.bag', rosbagFile()], ['b.mcap', await mcapRecording()], ['c.db3', await db3File()], ['notes.txt', 'x']]);
    const layout = datasetLayout(files);
    expect(layout).toMatchObject({ kind: 'rosbag', recordings: 3, duration_s: 8 });
    expect(layout.topics).toEqual(expect.arrayContaining([{ topic: '/chatter', messages: 3 }, { topic: '/joint_states', messages: 6 }]));
  });

  test('anything else is files; a meta/info.json that is not LeRobot claims nothing', async () => {
    const files = await inspected([['meta/info.json', '{"fps":30}'], ['data/a.parquet', await parquetFile()]]);
    expect(datasetLayout(files)).toEqual({ kind: 'files' });
    expect(missingLeRobotEpisodes(files)).toBeNull();
  });

  test('missing LeRobot episodes are named by the data_path template, chunked by chunks_size, at most 10 and a count', async () => {
    const info = JSON.stringify({ codebase_version: 'v2.1', total_episodes: 15, chunks_size: 4, features: {}, data_path: 'data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet' });
    const files = await inspected([['meta/info.json', info]]);
    files.push({ name: 'data/chunk-001/episode_000004.parquet' });
    const gap = missingLeRobotEpisodes(files)!;
    expect(gap.claimed).toBe(15);
    expect(gap.missing.slice(0, 5)).toEqual(['data/chunk-000/episode_000000.parquet', 'data/chunk-000/episode_000001.parquet', 'data/chunk-000/episode_000002.parquet', 'data/chunk-000/episode_000003.parquet', 'data/chunk-001/episode_000005.parquet']);
    expect(gap.missing).toHaveLength(11);
    expect(gap.missing[10]).toBe('and 4 more');
  });
});
