import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { strToU8, zipSync } from 'fflate';
import { McapWriter, TempBuffer } from '@mcap/core';
import { onnx } from 'onnx-proto';

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
