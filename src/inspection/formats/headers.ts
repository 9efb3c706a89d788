import { expect, Inspection } from '../inspection';
import type { RangedFile } from '../ranged-file';

/**
 * Formats checked by their signatures and headers (a few hundred bytes at the start and
 * end, read by range): the file must begin (and, where the format says, end) as the
 * format's spec writes it; what the header says is shown.
 */
const ascii = (b: Uint8Array) => new TextDecoder('latin1').decode(b);
const startsWith = (b: Uint8Array, sig: number[]) => sig.every((v, i) => b[i] === v);

export async function inspectPng(file: RangedFile): Promise<Inspection> {
  const head = await file.readAt(0, 24);
  expect(startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) && ascii(head.subarray(12, 16)) === 'IHDR', 'it is not a PNG image');
  const view = new DataView(head.buffer, head.byteOffset, 24);
  return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) };
}

export async function inspectJpeg(file: RangedFile): Promise<Inspection> {
  expect(startsWith(await file.readAt(0, 3), [0xff, 0xd8, 0xff]), 'it is not a JPEG image');
  expect(startsWith(await file.readAt(file.size - 2, 2), [0xff, 0xd9]), 'it does not end with the JPEG end-of-image marker: truncated');
  return { format: 'jpeg' };
}

export async function inspectTflite(file: RangedFile): Promise<Inspection> {
  expect(ascii((await file.readAt(0, 8)).subarray(4)) === 'TFL3', 'it does not carry the TensorFlow Lite file identifier TFL3');
  return { format: 'tflite' };
}

export async function inspectGzip(file: RangedFile): Promise<Inspection> {
  expect(startsWith(await file.readAt(0, 3), [0x1f, 0x8b, 0x08]), 'it is not gzip-compressed');
  return { format: 'gzip' };
}

/**
 * tar: ustar headers, 512 bytes each, stepped through by their sizes (the data is not read).
 * Each header is a read of its own, so the walk stops after the first 1,000 files
 * (`complete: false`): a tar has no index to list the rest cheaply.
 */
export async function inspectTar(file: RangedFile): Promise<Inspection> {
  const files: { name: string; size: number }[] = [];
  let entries = 0;
  let total = 0;
  let complete = true;
  let ended = false;
  for (let at = 0; at + 512 <= file.size; ) {
    file.checkTime();
    if (entries >= 1000) {
      complete = false;
      break;
    }
    const header = await file.readAt(at, 512);
    if (header.every((b) => b === 0)) {
      ended = true;
      break;
    }
    expect(ascii(header.subarray(257, 262)) === 'ustar', `the tar header at byte ${at} is not a ustar header`);
    const name = ascii(header.subarray(0, 100)).replace(/\0.*$/s, '');
    const size = parseInt(ascii(header.subarray(124, 136)).replace(/\0.*$/s, '').trim() || '0', 8);
    expect(Number.isSafeInteger(size), `the tar header of "${name}" has no size`);
    if (header[156] === 0x30 || header[156] === 0) {
      entries++;
      total += size;
      if (files.length < 1000) files.push({ name, size });
    }
    at += 512 + Math.ceil(size / 512) * 512;
    expect(at <= file.size, `"${name}" runs past the end of the archive: truncated`);
  }
  expect(entries > 0 || file.size >= 1024, 'it is not a tar archive');
  expect(ended || !complete, 'it ends without the end-of-archive blocks: truncated');
  return { format: 'tar', entries: complete ? entries : null, total_size: complete ? total : null, files, complete };
}

/** Stanford PLY: "ply", a format line, elements with counts, "end_header". */
export async function inspectPly(file: RangedFile): Promise<Inspection> {
  const head = ascii(await file.readAt(0, 4096));
  expect(/^ply\r?\n/.test(head), 'it does not start with "ply"');
  const end = head.indexOf('end_header');
  expect(end > 0, 'its header has no end_header within 4 KiB');
  const format = /^format (\S+)/m.exec(head)?.[1];
  expect(format, 'its header has no format line');
  const elements = Object.fromEntries([...head.slice(0, end).matchAll(/^element (\S+) (\d+)/gm)].map((m) => [m[1], Number(m[2])]));
  return { format: 'ply', encoding: format, elements };
}

/** Point Cloud Data: FIELDS, POINTS and DATA lines in the header. */
export async function inspectPcd(file: RangedFile): Promise<Inspection> {
  const head = ascii(await file.readAt(0, 4096));
  const fields = /^FIELDS (.+)$/m.exec(head)?.[1]?.trim().split(/\s+/);
  const points = /^POINTS (\d+)/m.exec(head)?.[1];
  const data = /^DATA (\S+)/m.exec(head)?.[1];
  expect(fields && points && data, 'its header lacks FIELDS, POINTS or DATA: not a PCD file');
  return { format: 'pcd', fields, points: Number(points), data };
}

/** STL: binary (80-byte header, triangle count, 50 bytes a triangle) or ASCII ("solid"). */
export async function inspectStl(file: RangedFile): Promise<Inspection> {
  const head = await file.readAt(0, 84);
  if (head.length === 84) {
    const triangles = new DataView(head.buffer, head.byteOffset, 84).getUint32(80, true);
    if (84 + triangles * 50 === file.size) return { format: 'stl', encoding: 'binary', triangles };
  }
  expect(/^\s*solid/.test(ascii(head)), 'it is neither a binary STL (its size does not match its triangle count) nor an ASCII one ("solid")');
  return { format: 'stl', encoding: 'ascii' };
}

/** USD: the crate signature PXR-USDC, or a usda text layer "#usda". */
export async function inspectUsd(file: RangedFile): Promise<Inspection> {
  const head = ascii(await file.readAt(0, 8));
  if (head === 'PXR-USDC') return { format: 'usd', encoding: 'crate' };
  expect(head.startsWith('#usda'), 'it is neither a USD crate file (PXR-USDC) nor a usda layer (#usda)');
  return { format: 'usd', encoding: 'usda' };
}
