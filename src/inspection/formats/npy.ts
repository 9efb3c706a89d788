import { expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';

/**
 * NumPy .npy (numpy.org/doc/stable/reference/generated/numpy.lib.format.html): the magic
 * \x93NUMPY, a version, a header length (u16 in 1.0, u32 in 2.0 and 3.0) and the header, a
 * Python dict literal `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`, parsed
 * here by its grammar, never evaluated. The data must be shape × itemsize bytes, the rest of
 * the file. An array of Python objects (dtype `O`) is a pickle: refused, as numpy.load refuses
 * it unless allow_pickle. Structured dtypes (a list descr) are shown as written, their size not checked.
 */
const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
const MAX_HEADER = 64 * 1024;

export async function inspectNpy(file: RangedFile): Promise<Inspection> {
  const head = await file.readAt(0, 12);
  expect(MAGIC.every((v, i) => head[i] === v), 'it does not start with the NumPy magic \\x93NUMPY');
  expect(head.length >= 10, 'it ends inside its preamble: truncated');
  const [major, minor] = [head[6], head[7]];
  expect(major >= 1 && major <= 3, `its format version ${major}.${minor} is not one NumPy writes (1.0, 2.0, 3.0)`);
  const view = new DataView(head.buffer, head.byteOffset, head.length);
  const lengthBytes = major === 1 ? 2 : 4;
  expect(head.length >= 8 + lengthBytes, 'it ends inside its preamble: truncated');
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  expect(headerLength <= MAX_HEADER, `its header claims ${headerLength} bytes (more than ${MAX_HEADER})`);
  const start = 8 + lengthBytes;
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(await file.exactly(start, headerLength, 'the header'));
  const descr = /'descr'\s*:\s*('([^']*)'|\[.*\])\s*,/s.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  expect(descr && fortran && shapeText, "its header is not a dict with 'descr', 'fortran_order' and 'shape'");
  const dims = shapeText[1].split(',').map((d) => d.trim()).filter(Boolean);
  expect(dims.every((d) => /^\d+L?$/.test(d)), `its shape (${shapeText[1]}) is not a tuple of integers`);
  const shape = dims.map((d) => Number.parseInt(d, 10));
  const dataStart = start + headerLength;
  const elements = shape.reduce((a, b) => a * b, 1);
  const simple = descr[2];
  if (simple !== undefined) {
    const dtype = /^([<>|=])([biufcmMOSUV])(\d*)(\[\w+\])?$/.exec(simple);
    expect(dtype, `its dtype '${simple}' is not a NumPy dtype string`);
    if (dtype[2] === 'O') throw new InspectionError('unsafe_pickle', `it is an array of Python objects (dtype 'O'), stored as a pickle, which is never loaded`);
    const itemsize = Number(dtype[3] || 0) * (dtype[2] === 'U' ? 4 : 1);
    if (itemsize > 0) {
      const expected = elements * itemsize;
      expect(file.size - dataStart === expected, `its header says ${shape.join('×') || 'a scalar'} of ${simple} (${expected} bytes of data) but the file holds ${file.size - dataStart}: ${file.size - dataStart < expected ? 'truncated' : 'corrupt'}`);
    }
  }
  return { format: 'npy', version: `${major}.${minor}`, dtype: simple ?? descr[1].slice(0, 1000), shape, fortran_order: fortran[1] === 'True', elements };
}
