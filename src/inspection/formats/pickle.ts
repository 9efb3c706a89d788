import { expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';
import { isZip, readZipEntries, readZipEntry } from './zip';

/**
 * Pickles are never loaded: their opcodes are scanned (as the Hugging Face Hub's
 * picklescan does) for the imports they would make, GLOBAL / INST (module and name on
 * their lines) and STACK_GLOBAL (the two strings pushed just before it). An import outside
 * the tensor-rebuilding allowlist (torch.load's weights_only set) fails the file, named.
 */
const ALLOWED: Record<string, readonly string[] | '*storage'> = {
  'torch._utils': [
    '_rebuild_tensor', '_rebuild_tensor_v2', '_rebuild_tensor_v3', '_rebuild_parameter', '_rebuild_parameter_with_state',
    '_rebuild_qtensor', '_rebuild_sparse_tensor', '_rebuild_nested_tensor', '_rebuild_device_tensor_from_numpy',
    '_rebuild_meta_tensor_no_storage', '_rebuild_wrapper_subclass', '_rebuild_device_tensor_from_cpu_tensor',
  ],
  torch: '*storage',
  'torch._tensor': ['_rebuild_from_type_v2'],
  'torch.nn.parameter': ['Parameter'],
  'torch.serialization': ['_get_layout'],
  collections: ['OrderedDict', 'defaultdict'],
  builtins: ['set', 'frozenset', 'slice', 'complex', 'bytearray', 'int', 'float', 'bool', 'str', 'tuple', 'list', 'dict'],
  __builtin__: ['set', 'frozenset', 'slice', 'complex', 'bytearray'],
  'numpy.core.multiarray': ['_reconstruct', 'scalar'],
  'numpy._core.multiarray': ['_reconstruct', 'scalar'],
  numpy: ['ndarray', 'dtype'],
  'numpy.dtypes': ['*'],
  _codecs: ['encode'],
};

/** torch's storage classes, dtypes and value types, imported by name from the torch module. */
const TORCH_NAMES = /^(\w+Storage|Size|device|dtype|layout|memory_format|strided|sparse_coo|sparse_csr|channels_last|contiguous_format|preserve_format|(b?float|int|uint|complex|bool|half|double|long|short|cfloat|cdouble|qint|quint)\w*)$/;

function allowed(module: string, name: string): boolean {
  const names = ALLOWED[module];
  if (names === '*storage') return TORCH_NAMES.test(name);
  return !!names && (names.includes(name) || names.includes('*'));
}

/** Opcodes and the bytes of their argument: a fixed length, a length prefix of n bytes, or lines. */
const FIXED: Record<number, number> = {
  0x4d: 2, 0x4b: 1, 0x4a: 4, 0x71: 1, 0x72: 4, 0x68: 1, 0x6a: 4, 0x47: 8, 0x80: 1, 0x95: 8, 0x82: 1, 0x83: 2, 0x84: 4,
};
const PREFIXED: Record<number, number> = { 0x8a: 1, 0x8b: 4, 0x54: 4, 0x55: 1, 0x58: 4, 0x8c: 1, 0x8d: 8, 0x8e: 8, 0x42: 4, 0x43: 1, 0x96: 8 };
const STRING_OPS = new Set([0x58, 0x8c, 0x8d, 0x54, 0x55]);
const LINES: Record<number, number> = { 0x49: 1, 0x4c: 1, 0x46: 1, 0x53: 1, 0x56: 1, 0x50: 1, 0x70: 1, 0x67: 1, 0x63: 2, 0x69: 2 };
const NO_ARG = new Set([...[..."(.0123N)]}abdelostuQR"].map((c) => c.charCodeAt(0)), 0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98]);
/** Memo opcodes change no stack: STACK_GLOBAL's strings are the last two pushes around them. */
const MEMO_OPS = new Set([0x71, 0x72, 0x70, 0x94]);
const GET_OPS = new Set([0x68, 0x6a, 0x67]);

export interface PickleScan {
  imports: string[];
  /** Persistent ids (torch: one per tensor's storage reference). */
  persistentIds: number;
  end: number;
}

const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8');

/** Scans one pickle from `start` to its STOP; throws unsafe_pickle naming the first disallowed import. */
export function scanPickle(bytes: Uint8Array, start = 0, where = 'the pickle'): PickleScan {
  const imports = new Set<string>();
  const memo = new Map<number, string | null>();
  let pushes: (string | null)[] = [];
  let persistentIds = 0;
  let pos = start;
  const need = (n: number) => expect(pos + n <= bytes.length, `${where} is truncated (it ends before its STOP opcode)`);
  const readLine = () => {
    const nl = bytes.indexOf(0x0a, pos);
    expect(nl >= 0, `${where} is truncated inside a text argument`);
    const line = latin1.decode(bytes.subarray(pos, nl));
    pos = nl + 1;
    return line;
  };
  const uint = (n: number) => {
    need(n);
    let v = 0;
    for (let i = n - 1; i >= 0; i--) v = v * 256 + bytes[pos + i];
    pos += n;
    return v;
  };
  const check = (module: string, name: string) => {
    const ref = `${module}.${name}`;
    if (!allowed(module, name)) throw new InspectionError('unsafe_pickle', `${where} imports ${ref}, which is outside the tensor-rebuilding allowlist; pickles are never loaded, and this one would run ${ref} when loaded`);
    imports.add(ref);
  };
  for (;;) {
    need(1);
    const op = bytes[pos++];
    let pushed: string | null | undefined = null;
    if (op === 0x2e) return { imports: [...imports].sort(), persistentIds, end: pos };
    if (op in FIXED) {
      const arg = uint(FIXED[op]);
      if (GET_OPS.has(op)) pushed = memo.get(arg) ?? null;
      else if (op === 0x80 || op === 0x95) pushed = undefined;
      else if (MEMO_OPS.has(op)) { memo.set(arg, pushes[pushes.length - 1] ?? null); pushed = undefined; }
    } else if (op in PREFIXED) {
      const length = uint(PREFIXED[op]);
      need(length);
      if (STRING_OPS.has(op)) pushed = (op === 0x54 || op === 0x55 ? latin1 : utf8).decode(bytes.subarray(pos, pos + length));
      pos += length;
    } else if (op in LINES) {
      const lines = [readLine(), ...(LINES[op] === 2 ? [readLine()] : [])];
      if (op === 0x63 || op === 0x69) check(lines[0], lines[1]);
      if (op === 0x50) persistentIds++;
      if (op === 0x70) { memo.set(Number(lines[0]), pushes[pushes.length - 1] ?? null); pushed = undefined; }
      if (op === 0x67) pushed = memo.get(Number(lines[0])) ?? null;
    } else if (NO_ARG.has(op)) {
      if (op === 0x93) {
        const [module, name] = pushes.slice(-2);
        if (typeof module !== 'string' || typeof name !== 'string') throw new InspectionError('unsafe_pickle', `${where} makes an import (STACK_GLOBAL at byte ${pos - 1}) whose module and name are not plain strings, so it cannot be checked`);
        check(module, name);
      }
      if (op === 0x94) { memo.set(memo.size, pushes[pushes.length - 1] ?? null); pushed = undefined; }
      if (op === 0x51) persistentIds++;
    } else {
      expect(false, `${where} has an unknown opcode 0x${op.toString(16)} at byte ${pos - 1}: not a pickle`);
    }
    if (pushed !== undefined) pushes = [pushes[pushes.length - 1] ?? null, pushed];
  }
}

/**
 * A PyTorch checkpoint (.pt .pth .ckpt): torch.save's zip (archive/data.pkl beside the
 * storages in archive/data/), or the legacy format (five pickles in a row, then raw
 * storages). Every pickle in it is scanned; none is loaded.
 */
export async function inspectPytorch(file: RangedFile): Promise<Inspection> {
  if (await isZip(file)) {
    const entries = await readZipEntries(file);
    const pickles = entries.filter((e) => e.name.endsWith('.pkl'));
    expect(pickles.length, 'it is a zip without a .pkl entry, so not a torch.save checkpoint');
    const imports = new Set<string>();
    let tensors = 0;
    for (const entry of pickles) {
      const scan = scanPickle(await readZipEntry(file, entry), 0, `its pickle "${entry.name}"`);
      scan.imports.forEach((i) => imports.add(i));
      tensors += scan.persistentIds;
    }
    const storages = entries.filter((e) => /\/data\/\d+$/.test(e.name)).length;
    return { format: 'pytorch', container: 'zip', pickle: 'safe', imports: [...imports].sort(), tensors, storages };
  }
  const head = await file.readAt(0, 2);
  expect(head[0] === 0x80 && head[1] >= 2, 'it is neither a zip (torch.save) nor a pickle (the legacy torch format)');
  // The legacy format's pickles (magic number, protocol, system info, the object, storage keys) come first and are small.
  const bytes = await file.readAt(0, Math.min(file.size, file.limits.maxReadBytes));
  const imports = new Set<string>();
  let tensors = 0;
  let pos = 0;
  for (let i = 0; i < 5 && pos < bytes.length; i++) {
    const scan = scanPickle(bytes, pos, i === 0 ? 'its pickle' : `its pickle ${i + 1}`);
    scan.imports.forEach((x) => imports.add(x));
    tensors += scan.persistentIds;
    pos = scan.end;
  }
  return { format: 'pytorch', container: 'legacy', pickle: 'safe', imports: [...imports].sort(), tensors };
}
