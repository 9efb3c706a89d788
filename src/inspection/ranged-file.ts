import type { BlobStore } from '../storage/blob-store';
import { InspectionError, InspectionLimits } from './inspection';

/**
 * One stored file as inspectors read it: ranged reads, each charged to the file's budget
 * (bytes read, time spent), the way @mcap/core's IReadable and hyparquet's AsyncBuffer
 * read. Reading past the end answers the bytes there are: a truncated file shows up as a
 * short read, which `exactly` turns into a clear error.
 */
export class RangedFile {
  private bytesRead = 0;
  private readonly deadline: number;

  constructor(
    readonly name: string,
    readonly size: number,
    private readonly source: (offset: number, length: number) => Promise<Uint8Array>,
    readonly limits: InspectionLimits,
  ) {
    this.deadline = Date.now() + limits.timeMs;
  }

  static ofStore(store: BlobStore, path: string, name: string, size: number, limits: InspectionLimits): RangedFile {
    return new RangedFile(name, size, async (offset, length) => {
      const bytes = await store.readRange(path, offset, length);
      if (!bytes) throw new InspectionError('invalid_format', 'nothing is stored there any more');
      return bytes;
    }, limits);
  }

  static ofBytes(name: string, bytes: Uint8Array, limits: InspectionLimits): RangedFile {
    return new RangedFile(name, bytes.length, async (offset, length) => bytes.subarray(offset, offset + length), limits);
  }

  /** Bytes read so far (bench/inspection.js reports it). */
  get read(): number {
    return this.bytesRead;
  }

  /** Up to length bytes from offset (fewer at the end of the file). */
  async readAt(offset: number, length: number): Promise<Uint8Array> {
    this.checkTime();
    const wanted = Math.max(0, Math.min(length, this.size - offset));
    if (this.bytesRead + wanted > this.limits.maxReadBytes) {
      throw new InspectionError('inspection_limit_exceeded', `inspecting it needs more than the ${mib(this.limits.maxReadBytes)} a file may be read`);
    }
    this.bytesRead += wanted;
    if (!wanted) return new Uint8Array(0);
    return this.source(offset, wanted);
  }

  /** Exactly length bytes from offset, or an error naming what is missing (a truncated file). */
  async exactly(offset: number, length: number, what: string): Promise<Uint8Array> {
    if (offset < 0 || length < 0 || offset + length > this.size) throw new InspectionError('invalid_format', `${what} would end at byte ${offset + length}, past the end of the file (${this.size} bytes): the file is truncated or corrupt`);
    const bytes = await this.readAt(offset, length);
    if (bytes.length !== length) throw new InspectionError('invalid_format', `${what} is truncated`);
    return bytes;
  }

  /** Throws once the time budget is spent; long loops call it. */
  checkTime(): void {
    if (Date.now() > this.deadline) throw new InspectionError('inspection_limit_exceeded', `inspecting it took longer than the ${this.limits.timeMs} ms a file may take`);
  }
}

export const mib = (bytes: number) => (bytes >= 1024 ** 2 ? `${Math.round((bytes / 1024 ** 2) * 10) / 10} MiB` : `${bytes} bytes`);

/**
 * What an inspector may see beyond its file: the files published with it (a rosbag2 .db3
 * reads the bag's metadata.yaml beside it). `sibling` takes a full name in the same listing.
 */
export interface InspectionContext {
  sibling(name: string): RangedFile | undefined;
}
