import { expect } from './inspection';
import type { RangedFile } from './ranged-file';

/**
 * A protobuf wire-format walker over a RangedFile: it yields each field's number and
 * where its value lies without decoding the value, so an inspector reads the small
 * messages it cares about and steps over large ones (an ONNX initializer's raw_data) with
 * no read at all. Bytes are read in windows; a file within the read limit is read once.
 */
const WINDOW = 1024;
const MAX_WINDOW = 1024 ** 2;

export class ProtoSource {
  private buf: Uint8Array = new Uint8Array(0);
  private start = 0;
  private lastWindow = WINDOW;

  private constructor(readonly file: RangedFile) {}

  /** Reads a file that fits the read limit whole, at once; a larger one window by window. */
  static async open(file: RangedFile): Promise<ProtoSource> {
    const source = new ProtoSource(file);
    if (file.size <= file.limits.maxReadBytes) {
      source.buf = await file.exactly(0, file.size, 'the file');
      source.start = 0;
    }
    return source;
  }

  get size(): number {
    return this.file.size;
  }

  /**
   * Loads bytes [pos, pos+n). A jump (over an initializer's data) reads a small window; reading
   * on from the last window doubles it, so a long run of small messages (a graph's nodes)
   * costs few reads, and a model with thousands of tensors costs a KiB or so for each.
   */
  private async ensure(pos: number, n: number, window = WINDOW): Promise<void> {
    if (pos >= this.start && pos + n <= this.start + this.buf.length) return;
    const sequential = pos >= this.start && pos <= this.start + this.buf.length + WINDOW;
    this.lastWindow = sequential ? Math.min(this.lastWindow * 2, MAX_WINDOW) : window;
    const length = Math.min(Math.max(n, this.lastWindow), this.file.size - pos);
    this.buf = await this.file.exactly(pos, Math.max(length, n), 'a field');
    this.start = pos;
  }

  async bytes(pos: number, n: number): Promise<Uint8Array> {
    await this.ensure(pos, n);
    return this.buf.subarray(pos - this.start, pos - this.start + n);
  }

  /** A varint at pos: its value (as a number; ONNX's varints fit in 53 bits) and the position after it. */
  async varint(pos: number, end: number, window = WINDOW): Promise<[number, number]> {
    await this.ensure(pos, Math.min(10, end - pos), window);
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      expect(pos + i < end, 'a varint runs past the end of its message');
      const byte = this.buf[pos + i - this.start];
      value += (byte & 0x7f) * scale;
      scale *= 128;
      if (byte < 0x80) return [value, pos + i + 1];
    }
    expect(false, 'a varint is longer than 10 bytes');
  }
}

export interface Field {
  field: number;
  wire: number;
  /** The value of a varint field. */
  value: number;
  /** Where a length-delimited value starts and how long it is. */
  offset: number;
  length: number;
}

/** The fields of the message between start and end, in order; invalid wire data fails. */
export async function* fields(src: ProtoSource, start: number, end: number, window = WINDOW): AsyncGenerator<Field> {
  let pos = start;
  let count = 0;
  while (pos < end) {
    if (++count % 4096 === 0) src.file.checkTime();
    const [tag, afterTag] = await src.varint(pos, end, window);
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    expect(field > 0, `field number 0 at byte ${pos}`);
    pos = afterTag;
    let value = 0;
    let offset = pos;
    let length = 0;
    if (wire === 0) [value, pos] = await src.varint(pos, end, window);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      [length, offset] = await src.varint(pos, end, window);
      pos = offset + length;
    } else expect(false, `wire type ${wire} at byte ${afterTag - 1} is not one this format uses`);
    expect(pos <= end, `a field at byte ${offset} runs past the end of its message (byte ${end}): the file is truncated or not this format`);
    yield { field, wire, value, offset, length };
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

export async function text(src: ProtoSource, f: Field): Promise<string> {
  return utf8.decode(await src.bytes(f.offset, Math.min(f.length, 4096)));
}

/** The varints of a repeated scalar field, packed (wire 2) or not (wire 0). */
export async function varints(src: ProtoSource, f: Field): Promise<number[]> {
  if (f.wire === 0) return [f.value];
  const out: number[] = [];
  let pos = f.offset;
  while (pos < f.offset + f.length) {
    const [value, next] = await src.varint(pos, f.offset + f.length);
    out.push(value);
    pos = next;
  }
  return out;
}
