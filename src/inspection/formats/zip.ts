import { Inflate } from 'fflate';
import { capped, expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';

/**
 * A zip read the way unzip -l does, by ranged reads: the end-of-central-directory record
 * (zip64 too), the central directory, and only the entries asked for. Nothing is
 * decompressed to list it; an entry is inflated with its declared size as a hard cap.
 */
export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Deflate's best ratio is 1032:1; a declared size above this multiple of the compressed one is a lie or a bomb. */
const MAX_RATIO = 1100;
const MAX_ENTRIES = 1_000_000;

const u16 = (b: Uint8Array, o: number) => b[o] | (b[o + 1] << 8);
const u32 = (b: Uint8Array, o: number) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16)) + b[o + 3] * 0x1000000;
const u64 = (b: Uint8Array, o: number) => u32(b, o) + u32(b, o + 4) * 0x100000000;

export async function isZip(file: RangedFile): Promise<boolean> {
  if (file.size < 22) return false;
  const head = await file.readAt(0, 4);
  return u32(head, 0) === 0x04034b50 || u32(head, 0) === 0x06054b50;
}

/** Every entry of the central directory; a layout that could expand without bound (overlapping entries, impossible ratios) fails. */
export async function readZipEntries(file: RangedFile): Promise<ZipEntry[]> {
  expect(file.size >= 22, 'it is too short to be a zip');
  const tailLength = Math.min(file.size, 22 + 65535);
  const tail = await file.readAt(file.size - tailLength, tailLength);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) if (u32(tail, i) === 0x06054b50) { eocd = i; break; }
  expect(eocd >= 0, 'it has no zip end-of-central-directory record: truncated or not a zip');
  let count = u16(tail, eocd + 10);
  let cdSize = u32(tail, eocd + 12);
  let cdOffset = u32(tail, eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    expect(eocd >= 20 && u32(tail, eocd - 20) === 0x07064b50, 'its zip64 end-of-central-directory locator is missing');
    const record = await file.exactly(u64(tail, eocd - 20 + 8), 56, 'the zip64 end-of-central-directory record');
    expect(u32(record, 0) === 0x06064b50, 'its zip64 end-of-central-directory record is missing');
    count = u64(record, 32);
    cdSize = u64(record, 40);
    cdOffset = u64(record, 48);
  }
  if (count > MAX_ENTRIES) throw new InspectionError('archive_bomb', `it lists ${count} entries, more than the ${MAX_ENTRIES} an archive may hold`);
  const cd = await file.exactly(cdOffset, cdSize, 'the zip central directory');
  const entries: ZipEntry[] = [];
  let pos = 0;
  for (let i = 0; i < count; i++) {
    if (i % 4096 === 0) file.checkTime();
    expect(pos + 46 <= cd.length && u32(cd, pos) === 0x02014b50, `zip central directory entry ${i + 1} is corrupt`);
    const nameLength = u16(cd, pos + 28);
    const extraLength = u16(cd, pos + 30);
    const commentLength = u16(cd, pos + 32);
    const entry: ZipEntry = {
      name: new TextDecoder().decode(cd.subarray(pos + 46, pos + 46 + nameLength)),
      method: u16(cd, pos + 10),
      compressedSize: u32(cd, pos + 20),
      size: u32(cd, pos + 24),
      localOffset: u32(cd, pos + 42),
    };
    // Sizes and offsets of 0xffffffff live in the zip64 extra field (id 1), in this order.
    let extra = pos + 46 + nameLength;
    const extraEnd = extra + extraLength;
    while (extra + 4 <= extraEnd) {
      const id = u16(cd, extra);
      const length = u16(cd, extra + 2);
      if (id === 1) {
        let at = extra + 4;
        for (const key of ['size', 'compressedSize', 'localOffset'] as const) {
          if (entry[key] === 0xffffffff && at + 8 <= extra + 4 + length) { entry[key] = u64(cd, at); at += 8; }
        }
      }
      extra += 4 + length;
    }
    entries.push(entry);
    pos = extraEnd + commentLength;
  }
  assertNoBomb(file, entries, cdOffset);
  return entries;
}

/**
 * A zip bomb either claims sizes no deflate stream reaches, or makes entries share their
 * compressed bytes (overlapping local files, Fifield's "better zip bomb"). Both fail here,
 * before anything is inflated.
 */
function assertNoBomb(file: RangedFile, entries: ZipEntry[], cdOffset: number): void {
  for (const e of entries) {
    if (e.method === 0 && e.size !== e.compressedSize) throw new InspectionError('archive_bomb', `entry "${e.name}" is stored uncompressed but declares ${e.size} bytes from ${e.compressedSize}`);
    if (e.size > MAX_RATIO * Math.max(e.compressedSize, 1) && e.size > 1024 ** 2) {
      throw new InspectionError('archive_bomb', `entry "${e.name}" declares ${e.size} bytes from ${e.compressedSize} compressed, beyond what deflate can reach: a zip bomb`);
    }
  }
  const byOffset = [...entries].sort((a, b) => a.localOffset - b.localOffset);
  for (let i = 0; i < byOffset.length; i++) {
    const e = byOffset[i];
    const end = e.localOffset + 30 + e.compressedSize;
    const next = i + 1 < byOffset.length ? byOffset[i + 1].localOffset : cdOffset;
    if (end > next) throw new InspectionError('archive_bomb', `entries "${e.name}" and "${byOffset[i + 1]?.name ?? 'the central directory'}" overlap: a zip bomb reuses compressed bytes this way`);
  }
  expect(byOffset.every((e) => e.localOffset + 30 <= file.size), 'an entry starts past the end of the file: truncated');
}

/** One entry's bytes, inflated with its declared size (and the read limit) as the cap. */
export async function readZipEntry(file: RangedFile, entry: ZipEntry): Promise<Uint8Array> {
  const local = await file.exactly(entry.localOffset, 30, `the local header of "${entry.name}"`);
  expect(u32(local, 0) === 0x04034b50, `the local header of "${entry.name}" is corrupt`);
  const dataStart = entry.localOffset + 30 + u16(local, 26) + u16(local, 28);
  const data = await file.exactly(dataStart, entry.compressedSize, `the data of "${entry.name}"`);
  if (entry.method === 0) return data;
  expect(entry.method === 8, `entry "${entry.name}" uses compression method ${entry.method}, not stored or deflate`);
  const cap = Math.min(entry.size, file.limits.maxReadBytes);
  if (entry.size > cap) throw new InspectionError('inspection_limit_exceeded', `entry "${entry.name}" inflates to ${entry.size} bytes, more than a file may be read`);
  const out = new Uint8Array(cap);
  let filled = 0;
  const inflate = new Inflate((chunk) => {
    if (filled + chunk.length > cap) throw new InspectionError('archive_bomb', `entry "${entry.name}" inflates past the ${entry.size} bytes it declares`);
    out.set(chunk, filled);
    filled += chunk.length;
  });
  try {
    inflate.push(data, true);
  } catch (error) {
    if (error instanceof InspectionError) throw error;
    expect(false, `entry "${entry.name}" does not inflate: ${(error as Error).message}`);
  }
  expect(filled === entry.size, `entry "${entry.name}" inflates to ${filled} bytes, not the ${entry.size} it declares`);
  return out;
}

export async function inspectZip(file: RangedFile, format = 'zip'): Promise<Inspection> {
  const entries = await readZipEntries(file);
  const files = entries.filter((e) => !e.name.endsWith('/'));
  return {
    format,
    entries: files.length,
    total_size: files.reduce((sum, e) => sum + e.size, 0),
    files: capped(files).map((e) => ({ name: e.name, size: e.size })),
  };
}
