import { expect, Inspection } from '../inspection';
import type { RangedFile } from '../ranged-file';

/** Bytes per element of each safetensors dtype. */
const DTYPE_BYTES: Record<string, number> = {
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, F8_E8M0: 1, I16: 2, U16: 2, F16: 2, BF16: 2,
  I32: 4, U32: 4, F32: 4, I64: 8, U64: 8, F64: 8, C64: 8, F4: 0.5, F6_E2M3: 0.75, F6_E3M2: 0.75,
};

/** The reference implementation refuses headers above 100 MB (safetensors/src/tensor.rs MAX_HEADER_SIZE). */
export const MAX_HEADER_BYTES = 100_000_000;

/**
 * A safetensors file (the format's spec): an 8-byte little-endian header length, a JSON
 * header naming each tensor's dtype, shape and byte range, then the data. Two reads: the
 * length, the header. Each tensor's range must match its dtype and shape and lie in the data.
 */
export async function inspectSafetensors(file: RangedFile): Promise<Inspection> {
  const head = await file.exactly(0, 8, 'the 8-byte header length');
  const declared = new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true);
  expect(declared <= BigInt(MAX_HEADER_BYTES), `its header length is ${declared} bytes, above the ${MAX_HEADER_BYTES} the format allows`);
  const length = Number(declared);
  expect(length >= 2 && 8 + length <= file.size, `its header length is ${length} bytes but the file has ${file.size - 8} after it: truncated or not safetensors`);
  const headerBytes = await file.exactly(8, length, 'the header');
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
  } catch (error) {
    expect(false, `its header is not JSON: ${(error as Error).message}`);
  }
  expect(header && typeof header === 'object' && !Array.isArray(header), 'its header is not a JSON object');
  const dataBytes = file.size - 8 - length;
  const dtypes: Record<string, number> = {};
  let parameters = 0;
  let tensors = 0;
  let metadata: Record<string, string> | null = null;
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = value as Record<string, string>;
      continue;
    }
    const t = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    expect(t && typeof t.dtype === 'string' && t.dtype in DTYPE_BYTES, `tensor "${name}" has an unknown dtype ${JSON.stringify(t?.dtype)}`);
    expect(Array.isArray(t.shape) && t.shape.every((d) => Number.isSafeInteger(d) && d >= 0), `tensor "${name}" has no valid shape`);
    const offsets = t.data_offsets as number[];
    expect(Array.isArray(offsets) && offsets.length === 2 && offsets.every((o) => Number.isSafeInteger(o)) && offsets[0] <= offsets[1], `tensor "${name}" has no valid data_offsets`);
    expect(offsets[1] <= dataBytes, `tensor "${name}" ends at byte ${offsets[1]} of the data, which has ${dataBytes}: truncated`);
    const elements = (t.shape as number[]).reduce((a, b) => a * b, 1);
    expect(Math.ceil(elements * DTYPE_BYTES[t.dtype]) === offsets[1] - offsets[0], `tensor "${name}" holds ${offsets[1] - offsets[0]} bytes, not the ${elements} ${t.dtype} values its shape names`);
    dtypes[t.dtype] = (dtypes[t.dtype] ?? 0) + 1;
    parameters += elements;
    tensors++;
  }
  return { format: 'safetensors', tensors, dtypes, parameters, metadata };
}
