import * as ort from 'onnxruntime-web';
import { capped, expect, Inspection, InspectionError } from '../inspection';
import { Field, fields, ProtoSource, text, varints } from '../protobuf';
import type { RangedFile } from '../ranged-file';

// One thread: the WebAssembly build would otherwise spawn workers per session, and loading
// a model to see that it loads gains nothing from them on a shared machine.
ort.env.wasm.numThreads = 1;

/** onnx.proto's TensorProto.DataType, by number. */
const ELEM_TYPES = [
  'undefined', 'float', 'uint8', 'int8', 'uint16', 'int16', 'int32', 'int64', 'string', 'bool', 'float16', 'double',
  'uint32', 'uint64', 'complex64', 'complex128', 'bfloat16', 'float8e4m3fn', 'float8e4m3fnuz', 'float8e5m2',
  'float8e5m2fnuz', 'uint4', 'int4', 'float4e2m1',
];

/** TypeProto nests (a sequence of maps of sequences ...); deeper than this is refused, not recursed into. */
export const MAX_TYPE_DEPTH = 32;
/** The standard operator domains onnxruntime implements; a model importing another needs custom operators to load. */
const STANDARD_DOMAINS = new Set(['', 'ai.onnx', 'ai.onnx.ml', 'com.microsoft', 'ai.onnx.training', 'ai.onnx.preview.training']);

type Dim = number | string | null;
interface TensorType { name: string; elem_type: string; shape: Dim[] | null }

/** A varint read as int64: two's complement above 2^63. */
const int64 = (n: number) => (n >= 2 ** 63 ? n - 2 ** 64 : n);

async function readShape(src: ProtoSource, f: Field): Promise<Dim[]> {
  const dims: Dim[] = [];
  for await (const d of fields(src, f.offset, f.offset + f.length)) {
    if (d.field !== 1 || d.wire !== 2) continue;
    let dim: Dim = null;
    for await (const v of fields(src, d.offset, d.offset + d.length)) {
      if (v.field === 1 && v.wire === 0) dim = int64(v.value);
      else if (v.field === 2 && v.wire === 2) dim = await text(src, v);
    }
    dims.push(dim);
  }
  return dims;
}

/** A TypeProto as "float" with its shape, or "sequence<...>", "map<...>", "optional<...>"; depth bounded. */
async function readType(src: ProtoSource, f: Field, depth: number): Promise<{ elem_type: string; shape: Dim[] | null }> {
  if (depth > MAX_TYPE_DEPTH) throw new InspectionError('invalid_format', `a value's type is nested more than ${MAX_TYPE_DEPTH} levels deep`);
  for await (const t of fields(src, f.offset, f.offset + f.length)) {
    if (t.wire !== 2) continue;
    if (t.field === 1 || t.field === 8) {
      let elem = 0;
      let shape: Dim[] | null = null;
      for await (const x of fields(src, t.offset, t.offset + t.length)) {
        if (x.field === 1 && x.wire === 0) elem = x.value;
        else if (x.field === 2 && x.wire === 2) shape = await readShape(src, x);
      }
      const name = ELEM_TYPES[elem] ?? `type_${elem}`;
      return { elem_type: t.field === 8 ? `sparse<${name}>` : name, shape };
    }
    if (t.field === 4 || t.field === 9) {
      let inner = { elem_type: 'unknown', shape: null as Dim[] | null };
      for await (const x of fields(src, t.offset, t.offset + t.length)) if (x.field === 1 && x.wire === 2) inner = await readType(src, x, depth + 1);
      return { elem_type: `${t.field === 4 ? 'sequence' : 'optional'}<${inner.elem_type}>`, shape: null };
    }
    if (t.field === 5) {
      let key = 0;
      let value = { elem_type: 'unknown', shape: null as Dim[] | null };
      for await (const x of fields(src, t.offset, t.offset + t.length)) {
        if (x.field === 1 && x.wire === 0) key = x.value;
        else if (x.field === 2 && x.wire === 2) value = await readType(src, x, depth + 1);
      }
      return { elem_type: `map<${ELEM_TYPES[key] ?? key},${value.elem_type}>`, shape: null };
    }
  }
  return { elem_type: 'unknown', shape: null };
}

async function readValueInfo(src: ProtoSource, f: Field): Promise<TensorType> {
  let name = '';
  let type = { elem_type: 'unknown', shape: null as Dim[] | null };
  for await (const v of fields(src, f.offset, f.offset + f.length)) {
    if (v.field === 1 && v.wire === 2) name = await text(src, v);
    else if (v.field === 2 && v.wire === 2) type = await readType(src, v, 1);
  }
  return { name, ...type };
}

/** An initializer's element count and whether its data lives in an external file; raw_data is stepped over, never read. */
async function readInitializer(src: ProtoSource, f: Field): Promise<{ name: string; elements: number; external: boolean }> {
  let elements = 1;
  let name = '';
  let external = false;
  for await (const t of fields(src, f.offset, f.offset + f.length)) {
    if (t.field === 1) for (const d of await varints(src, t)) elements *= int64(d);
    else if (t.field === 8 && t.wire === 2) name = await text(src, t);
    else if (t.field === 14 && t.wire === 0) external = t.value === 1;
    // raw_data is written after dims, data_type and name, and a tensor holding it has no external location.
    else if (t.field === 9) break;
  }
  return { name, elements, external };
}

/**
 * An ONNX ModelProto, walked field by field (onnx.proto numbers): the header fields, the
 * opsets, the graph's inputs, outputs, operators and initializers; initializer data is
 * stepped over, so a multi-GiB model costs a few reads. A file within the read limit is
 * also loaded in onnxruntime (WebAssembly build), which must create a session from it.
 */
export async function inspectOnnx(file: RangedFile): Promise<Inspection> {
  const src = await ProtoSource.open(file);
  let irVersion: number | undefined;
  let producer = '';
  let producerVersion = '';
  const opsets: { domain: string; version: number }[] = [];
  let graph: Field | undefined;
  for await (const f of fields(src, 0, src.size)) {
    if (f.field === 1 && f.wire === 0) irVersion = f.value;
    else if (f.field === 2 && f.wire === 2) producer = await text(src, f);
    else if (f.field === 3 && f.wire === 2) producerVersion = await text(src, f);
    else if (f.field === 7 && f.wire === 2) graph = f;
    else if (f.field === 8 && f.wire === 2) {
      const opset = { domain: '', version: 0 };
      for await (const o of fields(src, f.offset, f.offset + f.length)) {
        if (o.field === 1 && o.wire === 2) opset.domain = await text(src, o);
        else if (o.field === 2 && o.wire === 0) opset.version = o.value;
      }
      opsets.push(opset);
    }
  }
  expect(irVersion !== undefined, 'it has no ir_version (field 1 of an ONNX ModelProto)');
  expect(graph, 'it has no graph (field 7 of an ONNX ModelProto)');
  expect(opsets.length > 0, 'it imports no operator set (opset_import)');

  const inputs: TensorType[] = [];
  const outputs: TensorType[] = [];
  const initializerNames = new Set<string>();
  const operators: Record<string, number> = {};
  let nodes = 0;
  let parameters = 0;
  let external = false;
  let graphName = '';
  for await (const g of fields(src, graph.offset, graph.offset + graph.length)) {
    if (g.wire !== 2) continue;
    if (g.field === 1) {
      nodes++;
      for await (const n of fields(src, g.offset, g.offset + g.length)) {
        if (n.field === 4 && n.wire === 2) {
          const op = await text(src, n);
          operators[op] = (operators[op] ?? 0) + 1;
        }
      }
    } else if (g.field === 2) graphName = await text(src, g);
    else if (g.field === 5) {
      const init = await readInitializer(src, g);
      parameters += init.elements;
      external ||= init.external;
      initializerNames.add(init.name);
    } else if (g.field === 11) inputs.push(await readValueInfo(src, g));
    else if (g.field === 12) outputs.push(await readValueInfo(src, g));
  }
  // Before IR 4, initializers were listed among the inputs too: they are weights, not inputs.
  const realInputs = inputs.filter((i) => !initializerNames.has(i.name));
  expect(outputs.length > 0, 'its graph has no outputs');

  const defaultOpset = opsets.find((o) => o.domain === '' || o.domain === 'ai.onnx')?.version ?? null;
  const inspection: Inspection = {
    format: 'onnx',
    ir_version: irVersion,
    opset: defaultOpset,
    opset_imports: opsets,
    producer: [producer, producerVersion].filter(Boolean).join(' ') || null,
    graph_name: graphName || null,
    inputs: capped(realInputs, 100),
    outputs: capped(outputs, 100),
    nodes,
    operators,
    parameters,
    external_data: external,
  };
  inspection.onnxruntime = await sessionCheck(file, src, opsets, external);
  return inspection;
}

/** "loads" once onnxruntime created a session; why not checked otherwise; a load failure fails the file. */
async function sessionCheck(file: RangedFile, src: ProtoSource, opsets: { domain: string }[], external: boolean): Promise<string> {
  if (file.size > file.limits.maxReadBytes) return 'not checked: larger than the read limit';
  if (external) return 'not checked: weights in external data files';
  const custom = opsets.find((o) => !STANDARD_DOMAINS.has(o.domain));
  if (custom) return `not checked: custom operator domain ${custom.domain}`;
  await loadOnnxSession(await src.bytes(0, file.size));
  return 'loads';
}

/** Creates an onnxruntime session from the model's bytes (and releases it); what onnxruntime says when it cannot. */
export async function loadOnnxSession(bytes: Uint8Array): Promise<void> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes);
  } catch (error) {
    throw new InspectionError('invalid_format', `onnxruntime cannot load it: ${(error as Error).message}`);
  }
  await session.release();
}
