import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { DEFAULT_LIMITS, InspectionLimits } from '../../src/inspection/inspection';
import { RangedFile } from '../../src/inspection/ranged-file';
import { inspectFile, InspectionOutcome } from '../../src/inspection/registry';
import { maliciousPickle, mcapFile, mcapRecording, onnxModel, onnxModelParameters, python, safetensorsFile, torchCheckpoint, torchStatePickle, urdfRobot } from '../support/asset-files';

const inspect = (name: string, bytes: Uint8Array | string, limits: InspectionLimits = DEFAULT_LIMITS): Promise<InspectionOutcome> =>
  inspectFile(RangedFile.ofBytes(name, typeof bytes === 'string' ? strToU8(bytes) : bytes, limits));

async function passes(name: string, bytes: Uint8Array | string) {
  const outcome = await inspect(name, bytes);
  if (!outcome.ok) throw new Error(`expected ${name} to pass: ${outcome.problem.message}`);
  return outcome.inspection;
}

async function fails(name: string, bytes: Uint8Array | string, limits?: InspectionLimits) {
  const started = Date.now();
  const outcome = await inspect(name, bytes, limits);
  // Hostile files fail fast: none of them may hang the inspection.
  expect(Date.now() - started).toBeLessThan(5000);
  if (outcome.ok) throw new Error(`expected ${name} to fail, got ${JSON.stringify(outcome.inspection)}`);
  expect(outcome.problem.message).toContain(`"${name}"`);
  return outcome.problem;
}

/** Protobuf by hand: a length-delimited field, a varint field. */
const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n >= 0x80) { out.push((n % 128) | 0x80); n = Math.floor(n / 128); }
  out.push(n);
  return out;
};
const msg = (field: number, body: Buffer) => Buffer.concat([Buffer.from([...varint(field * 8 + 2), ...varint(body.length)]), body]);
const num = (field: number, value: number) => Buffer.from([...varint(field * 8), ...varint(value)]);

describe('ONNX', () => {
  test('a model written by onnx-proto shows its header, inputs, outputs and parameters, and loads in onnxruntime', async () => {
    expect(await passes('policy.onnx', onnxModel())).toEqual({
      format: 'onnx',
      ir_version: 8,
      opset: 13,
      opset_imports: [{ domain: '', version: 13 }],
      producer: 'test-fixture 1',
      graph_name: 'policy',
      inputs: [{ name: 'obs', elem_type: 'float', shape: ['batch', 4] }],
      outputs: [{ name: 'action', elem_type: 'float', shape: ['batch', 2] }],
      nodes: 3,
      operators: { Gemm: 2, Tanh: 1 },
      parameters: onnxModelParameters(),
      external_data: false,
      onnxruntime: 'loads',
    });
  });

  test('text named .onnx is not an ONNX model, and says so naming the file', async () => {
    const problem = await fails('policy.onnx', 'onnx weights');
    expect(problem).toEqual({ code: 'invalid_format', message: expect.stringMatching(/^"policy\.onnx" is not an ONNX model: /) });
  });

  test('a truncated model fails', async () => {
    const model = onnxModel();
    expect((await fails('policy.onnx', model.subarray(0, model.length - 40))).message).toMatch(/truncated|past the end/);
  });

  test('a safetensors file named .onnx fails', async () => {
    await fails('policy.onnx', safetensorsFile());
  });

  test('a model onnxruntime cannot load (an operator that does not exist) fails with what onnxruntime said', async () => {
    const bytes = onnxModel();
    const broken = Buffer.from(bytes.toString('latin1').replace('Tanh', 'Tanq'), 'latin1');
    expect((await fails('policy.onnx', broken)).message).toMatch(/onnxruntime cannot load it/);
  });

  test('a type nested 100,000 levels deep fails at the depth bound, without overflowing the stack', async () => {
    // Written outside in: each level is a sequence_type (4) holding an elem_type (1), lengths known from the inside.
    const core = msg(1, num(1, 1));
    const prefixes: Buffer[] = [];
    let inner = core.length;
    for (let i = 0; i < 100_000; i++) {
      const elem = Buffer.from([...varint(1 * 8 + 2), ...varint(inner)]);
      const seq = Buffer.from([...varint(4 * 8 + 2), ...varint(inner + elem.length)]);
      prefixes.push(elem, seq);
      inner += elem.length + seq.length;
    }
    const type = Buffer.concat([...prefixes.reverse(), core]);
    const graph = Buffer.concat([msg(11, Buffer.concat([msg(1, Buffer.from('obs')), msg(2, type)])), msg(12, msg(1, Buffer.from('out')))]);
    const model = Buffer.concat([num(1, 8), msg(8, num(2, 13)), msg(7, graph)]);
    expect((await fails('deep.onnx', model)).message).toMatch(/nested more than 32 levels/);
  });

  test('a model larger than the read limit is walked by ranged reads, its weights never read', async () => {
    const model = onnxModel({ hidden: 4096 });
    const file = RangedFile.ofBytes('big.onnx', model, { maxReadBytes: 64 * 1024, timeMs: 10_000 });
    const outcome = await inspectFile(file);
    expect(outcome).toMatchObject({ ok: true, inspection: { parameters: onnxModelParameters(4096), onnxruntime: 'not checked: larger than the read limit' } });
    expect(model.length).toBeGreaterThan(100_000);
    expect(file.read).toBeLessThan(64 * 1024);
  });
});

describe('safetensors', () => {
  test('a file written to the spec shows tensors, dtypes and parameters', async () => {
    expect(await passes('model.safetensors', safetensorsFile({ a: { dtype: 'F32', shape: [2, 3] }, b: { dtype: 'I64', shape: [4] } }))).toEqual({
      format: 'safetensors', tensors: 2, dtypes: { F32: 1, I64: 1 }, parameters: 10, metadata: { format: 'pt' },
    });
  });

  test('a header length of 2^60 fails at once', async () => {
    const bytes = safetensorsFile();
    bytes.writeBigUInt64LE(2n ** 60n);
    expect((await fails('model.safetensors', bytes)).message).toMatch(/header length is 1152921504606846976 bytes, above/);
  });

  test('truncated data fails naming the tensor', async () => {
    const bytes = safetensorsFile();
    expect((await fails('model.safetensors', bytes.subarray(0, bytes.length - 4))).message).toMatch(/tensor "fc\.bias" ends at byte 32 of the data, which has 28/);
  });
});

describe('PyTorch pickles: scanned, never loaded', () => {
  const marker = join(mkdtempSync(join(tmpdir(), 'pickle-')), 'ran');

  test.each([2, 4] as const)('a pickle (protocol %i) that would call os.system is refused naming it, and nothing runs', async (protocol) => {
    const problem = await fails('weights.pt', maliciousPickle(`touch ${marker}`, protocol));
    expect(problem.code).toBe('unsafe_pickle');
    // os.system pickles as posix.system on Linux: the name it would really be imported by.
    expect(problem.message).toMatch(/imports posix\.system, which is outside the tensor-rebuilding allowlist/);
    expect(existsSync(marker)).toBe(false);
  });

  test('the same payload inside a torch.save zip is refused', async () => {
    const problem = await fails('model.pth', torchCheckpoint(maliciousPickle(`touch ${marker}`, 2)));
    expect(problem.message).toMatch(/its pickle "archive\/data\.pkl" imports posix\.system/);
    expect(existsSync(marker)).toBe(false);
  });

  test('builtins.exec and subprocess are refused too', async () => {
    const exec = python('import pickle,sys; sys.stdout.buffer.write(pickle.dumps(exec, protocol=4))');
    expect((await fails('a.ckpt', exec)).message).toMatch(/builtins\.exec/);
    const sub = python('import pickle,sys,subprocess; sys.stdout.buffer.write(pickle.dumps(subprocess.Popen, protocol=3))');
    expect((await fails('a.pt', sub)).message).toMatch(/subprocess\.Popen/);
  });

  test('a torch.save checkpoint of tensors passes with the imports it makes', async () => {
    expect(await passes('model.pt', torchCheckpoint())).toEqual({
      format: 'pytorch', container: 'zip', pickle: 'safe', imports: ['collections.OrderedDict', 'torch.FloatStorage', 'torch._utils._rebuild_tensor_v2'], tensors: 2, storages: 2,
    });
    expect(await passes('legacy.pt', torchStatePickle())).toMatchObject({ container: 'legacy', pickle: 'safe', tensors: 2 });
  });

  test('bytes that are neither zip nor pickle fail', async () => {
    expect((await fails('model.pt', 'not a checkpoint')).message).toMatch(/neither a zip/);
  });
});

describe('URDF, xacro, SDF', () => {
  test('a URDF shows its robot, links, joints by type, degrees of freedom and meshes', async () => {
    expect(await passes('arm.urdf', urdfRobot())).toEqual({
      format: 'urdf', robot: 'two_link_arm', root: 'base_link', links: 3, joints: 2, joints_by_type: { revolute: 1, prismatic: 1 }, degrees_of_freedom: 2,
      meshes: ['package://arm/meshes/base_link.stl', 'package://arm/meshes/link_1.stl', 'package://arm/meshes/link_2.stl'],
    });
  });

  test('an entity bomb is refused without expanding anything', async () => {
    const lol = ['<!ENTITY lol "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`)].join('');
    const problem = await fails('bomb.urdf', `<?xml version="1.0"?><!DOCTYPE robot [${lol}]><robot name="&lol9;"><link name="a"/></robot>`);
    expect(problem).toMatchObject({ code: 'unsafe_xml' });
  });

  test('an external entity is refused', async () => {
    const problem = await fails('x.urdf', '<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><robot name="&xxe;"><link name="a"/></robot>');
    expect(problem.message).toMatch(/declares XML entities/);
  });

  test('broken robots fail naming what is wrong', async () => {
    expect((await fails('arm.urdf', urdfRobot().replace('</robot>', ''))).message).toMatch(/not well-formed XML/);
    expect((await fails('arm.urdf', urdfRobot().replace('<child link="link_2"/>', '<child link="link_9"/>'))).message).toMatch(/"arm\.urdf" is not a URDF robot description: joint joint_2 names child link "link_9", which does not exist/);
    expect((await fails('arm.urdf', '<robot name="r"></robot>')).message).toMatch(/no links/);
  });

  test('xacro and SDF', async () => {
    expect(await passes('arm.xacro', '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:macro name="m"/><link name="a"/></robot>')).toMatchObject({ format: 'xacro', robot: 'arm', links: 1, macros: 1 });
    expect(await passes('world.sdf', '<sdf version="1.9"><world name="w"><model name="m"><link name="a"/><link name="b"/><joint name="j" type="revolute"/></model></world></sdf>')).toMatchObject({
      format: 'sdf', version: '1.9', models: [{ name: 'm', links: 2, joints: 1 }], joints_by_type: { revolute: 1 },
    });
  });
});

describe('archives', () => {
  const zip = () => Buffer.from(zipSync({ 'robot.urdf': strToU8(urdfRobot()), 'meshes/a.stl': new Uint8Array(1000) }));

  test('a zip lists its files with sizes', async () => {
    expect(await passes('pkg.zip', zip())).toEqual({ format: 'zip', entries: 2, total_size: urdfRobot().length + 1000, files: [{ name: 'robot.urdf', size: urdfRobot().length }, { name: 'meshes/a.stl', size: 1000 }] });
  });

  test('a zip bomb (an entry declaring 4 GiB from a few bytes) fails before anything is inflated', async () => {
    const bytes = zip();
    const cd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.writeUInt32LE(0xfffffffe, cd + 24);
    expect(await fails('pkg.zip', bytes)).toMatchObject({ code: 'archive_bomb', message: expect.stringMatching(/beyond what deflate can reach/) });
  });

  test('overlapping entries (a non-recursive zip bomb) fail', async () => {
    const bytes = zip();
    const cd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.writeUInt32LE(0, cd + 42);
    expect(await fails('pkg.zip', bytes)).toMatchObject({ code: 'archive_bomb', message: expect.stringMatching(/overlap/) });
  });

  test('a truncated zip fails', async () => {
    expect((await fails('pkg.zip', zip().subarray(0, 200))).message).toMatch(/end-of-central-directory/);
  });

  test('an .npz written by NumPy lists its arrays', async () => {
    const npz = python('import io,sys,numpy as np; b=io.BytesIO(); np.savez(b, obs=np.zeros((3,4)), act=np.ones(2)); sys.stdout.buffer.write(b.getvalue())');
    expect(await passes('data.npz', npz)).toMatchObject({ format: 'npz', entries: 2, files: [{ name: 'obs.npy' }, { name: 'act.npy' }] });
  });
});

describe('MCAP', () => {
  test('a recording written by McapWriter shows its topics with schemas and message counts, start, end and duration', async () => {
    expect(await passes('run.mcap', await mcapRecording())).toEqual({
      format: 'mcap', indexed: true, profile: 'ros2', library: 'test-fixture', messages: 4,
      start: '2023-11-14T22:13:20.000Z', end: '2023-11-14T22:13:22.000Z', duration_s: 2,
      topics: [
        { topic: '/joint_states', message_encoding: 'cdr', schema: 'sensor_msgs/msg/JointState', schema_encoding: 'ros2msg', messages: 3 },
        { topic: '/camera', message_encoding: 'json', schema: null, schema_encoding: null, messages: 1 },
      ],
    });
  });

  test('one written without a summary passes unindexed; a truncated one fails', async () => {
    expect(await passes('bare.mcap', mcapFile())).toEqual({ format: 'mcap', indexed: false });
    const run = await mcapRecording();
    expect((await fails('run.mcap', run.subarray(0, run.length - 30))).message).toMatch(/does not end with the MCAP magic: truncated/);
  });
});

describe('headers and text', () => {
  test('random bytes named .hdf5, .parquet, .mcap, .bag fail; unknown formats pass as opaque', async () => {
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251));
    for (const name of ['a.hdf5', 'a.h5', 'a.parquet', 'a.mcap', 'a.bag', 'a.db3', 'a.png', 'a.jpg', 'a.tflite', 'a.ply', 'a.pcd', 'a.usd', 'a.json', 'a.csv']) await fails(name, random);
    expect(await passes('model.engine', random)).toEqual({ format: 'opaque' });
  });

  test('a PNG shows its size; JSON, JSONL and CSV their structure', async () => {
    const png = python('import zlib,struct,sys\ndef chunk(t,d): return struct.pack(">I",len(d))+t+d+struct.pack(">I",zlib.crc32(t+d))\nsys.stdout.buffer.write(b"\\x89PNG\\r\\n\\x1a\\n"+chunk(b"IHDR",struct.pack(">IIBBBBB",3,2,8,0,0,0,0))+chunk(b"IDAT",zlib.compress(b"\\0\\0\\0\\0"*2))+chunk(b"IEND",b""))');
    expect(await passes('a.png', png)).toEqual({ format: 'png', width: 3, height: 2 });
    expect(await passes('a.json', '{"a":1,"b":[2]}')).toEqual({ format: 'json', top_level: 'object', keys: ['a', 'b'] });
    expect(await passes('a.jsonl', '{"a":1}\n{"a":2}\n')).toEqual({ format: 'jsonl', records: 2, records_checked: 2 });
    expect((await fails('a.jsonl', '{"a":1}\n{oops\n')).message).toMatch(/line 2 is not JSON/);
    expect(await passes('a.csv', 'x,y\n1,2\n3,4\n')).toEqual({ format: 'csv', columns: ['x', 'y'], rows: 2 });
  });

  test('a file needing more reads than the limit fails with the limit named; a large JSON is checked on its start only', async () => {
    const tensors = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`layer_${i}.weight`, { dtype: 'F32' as const, shape: [2] }]));
    const limits = { maxReadBytes: 64 * 1024, timeMs: 10_000 };
    expect(await fails('big.safetensors', safetensorsFile(tensors), limits)).toMatchObject({ code: 'inspection_limit_exceeded', message: expect.stringMatching(/more than the 65536 bytes a file may be read/) });
    const big = JSON.stringify({ a: 'x'.repeat(100_000) });
    expect(await inspect('a.json', big, limits)).toEqual({ ok: true, inspection: { format: 'json', top_level: 'object', complete: false } });
  });

  test('a tar written by tar lists its files', async () => {
    const tar = python('import io,sys,tarfile\nb=io.BytesIO()\nwith tarfile.open(fileobj=b, mode="w", format=tarfile.USTAR_FORMAT) as t:\n  for n,d in [("a.txt",b"hello"),("dir/b.bin",b"x"*700)]:\n    i=tarfile.TarInfo(n); i.size=len(d); t.addfile(i, io.BytesIO(d))\nsys.stdout.buffer.write(b.getvalue())');
    expect(await passes('data.tar', tar)).toEqual({ format: 'tar', entries: 2, total_size: 705, files: [{ name: 'a.txt', size: 5 }, { name: 'dir/b.bin', size: 700 }], complete: true });
    expect((await fails('data.tar', tar.subarray(0, 1100))).message).toMatch(/truncated/);
  });
});

test('python3 is there (the pickle fixtures are made by it)', () => {
  expect(execFileSync('python3', ['--version']).toString()).toMatch(/Python 3/);
});
