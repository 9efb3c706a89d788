import { expect, Inspection } from '../inspection';
import type { RangedFile } from '../ranged-file';

/**
 * TFRecord (tensorflow.org/tutorials/load_data/tfrecord): records framed as
 * `u64 length, u32 masked_crc32c(length), data, u32 masked_crc32c(data)`. A file within the
 * read limit is read whole and every record's two CRCs checked; a larger one is walked by
 * its frames (12 bytes each, ranged reads, the data stepped over): each length's CRC checked,
 * at most 10,000 records (`complete: false` after). The records are not decoded (tf.Example
 * needs the features' spec, which the file does not carry).
 */
const MAX_WALKED = 10_000;

export async function inspectTfrecord(file: RangedFile): Promise<Inspection> {
  expect(file.size >= 16, 'it is too short to hold a record');
  const whole = file.size <= file.limits.maxReadBytes ? await file.exactly(0, file.size, 'the file') : null;
  const read = async (at: number, n: number, what: string) => (whole ? checkedSlice(whole, at, n, what) : file.exactly(at, n, what));
  let records = 0;
  let bytes = 0;
  let at = 0;
  while (at < file.size) {
    if (!whole && records >= MAX_WALKED) return result(false);
    if (records % 1024 === 0) file.checkTime();
    expect(at + 12 <= file.size, `record ${records + 1} at byte ${at} ends inside its length: truncated`);
    const frame = await read(at, 12, `record ${records + 1}`);
    const view = new DataView(frame.buffer, frame.byteOffset, 12);
    const length = view.getBigUint64(0, true);
    expect(maskedCrc32c(frame.subarray(0, 8)) === view.getUint32(8, true), `record ${records + 1} at byte ${at}: its length's CRC does not match (not TFRecord framing, or corrupt)`);
    const end = BigInt(at) + 12n + length + 4n;
    expect(end <= BigInt(file.size), `record ${records + 1} at byte ${at} claims ${length} bytes, past the end of the file: truncated`);
    if (whole) {
      const data = whole.subarray(at + 12, at + 12 + Number(length));
      const crc = new DataView(whole.buffer, whole.byteOffset + at + 12 + Number(length), 4).getUint32(0, true);
      expect(maskedCrc32c(data) === crc, `record ${records + 1} at byte ${at}: its data's CRC does not match (corrupt)`);
    }
    records++;
    bytes += Number(length);
    at = Number(end);
  }
  return result(true);

  function result(complete: boolean): Inspection {
    return { format: 'tfrecord', records: complete ? records : null, records_checked: records, data_bytes: complete ? bytes : null, data_crc_checked: Boolean(whole), complete };
  }
}

function checkedSlice(bytes: Uint8Array, at: number, n: number, what: string): Uint8Array {
  expect(at + n <= bytes.length, `${what} is truncated`);
  return bytes.subarray(at, at + n);
}

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord and LevelDB use it. */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** TFRecord stores CRCs masked: rotated right by 15 bits plus 0xa282ead8. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
