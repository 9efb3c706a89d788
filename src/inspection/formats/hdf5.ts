import { expect, Inspection, InspectionError, LIST_CAP } from '../inspection';
import { importEsm } from '../esm';
import type { RangedFile } from '../ranged-file';

/**
 * HDF5, read with h5wasm (the HDF5 C library compiled to WebAssembly). HDF5 reads
 * synchronously from a file in h5wasm's virtual file system and our reads are
 * asynchronous (a store, S3), so the file is put there as a lazy file of 64 KiB blocks:
 * a read of a block not yet fetched fails with EIO (the library gives up cleanly, with
 * its own error), the block is fetched by a ranged read, and the walk starts again. A
 * walk needs as many passes as the blocks its metadata lies in (a handful for a file
 * written in one go: HDF5 keeps object headers and B-trees near each other), each pass
 * re-reading only what is cached; bytes read are the metadata blocks, never the data.
 * Bounded by the file's read and time limits, and at most MAX_PASSES passes.
 *
 * Shown: the group/dataset tree (first 1,000 objects, 32 levels) with each dataset's
 * shape and dtype (numpy notation: "<f4" is a little-endian float32).
 */
const BLOCK = 64 * 1024;
/** A file at most this large is fetched whole, in one read. */
const WHOLE = 1024 * 1024;
const MAX_PASSES = 256;
const MAX_DEPTH = 32;
const EIO = 29;

interface H5Object {
  type: string;
  keys?(): string[];
  get?(name: string): H5Object | null;
  shape?: number[] | null;
  metadata?: { type?: number; size?: number; signed?: boolean; littleEndian?: boolean; chunks?: number[] | null };
  close?(): void;
}
interface StreamOps {
  read(stream: unknown, buffer: Uint8Array, offset: number, length: number, position: number): number;
  [op: string]: unknown;
}
interface FsNode {
  contents: unknown;
  usedBytes: number;
  stream_ops: StreamOps;
}
interface H5wasm {
  ready: Promise<{ activate_throwing_error_handler(): number }>;
  FS: {
    createFile(parent: string, name: string, properties: object, canRead: boolean, canWrite: boolean): FsNode;
    unlink(path: string): void;
    ErrnoError: new (errno: number) => Error;
  };
  File: new (path: string, mode: string) => H5Object & { close(): void };
}

let h5wasm: Promise<H5wasm> | undefined;
/** The browser (ES module) build: its file system is in memory, where a lazy file can be made (the Node build reads the real disk). */
function load(): Promise<H5wasm> {
  h5wasm ??= importEsm<H5wasm>('h5wasm').then(async (h5) => {
    // HDF5's errors are thrown as JS errors, not printed to stderr.
    (await h5.ready).activate_throwing_error_handler();
    return h5;
  });
  return h5wasm;
}

let counter = 0;

interface Entry {
  path: string;
  type: 'group' | 'dataset' | 'datatype' | 'link';
  shape?: number[] | null;
  dtype?: string;
  chunks?: number[] | null;
}

export async function inspectHdf5(file: RangedFile): Promise<Inspection> {
  const superblock = await findSuperblock(file);
  const h5 = await load();
  const blocks = new Map<number, Uint8Array>();
  if (file.size <= WHOLE) blocks.set(-1, await file.exactly(0, file.size, 'the file'));
  const missing = new Set<number>();
  const name = `inspect-${process.pid}-${++counter}.h5`;
  const node = h5.FS.createFile('/', name, {}, true, false);
  node.contents = true; // never loaded: reads go through `read` below
  node.usedBytes = file.size;
  node.stream_ops = {
    ...node.stream_ops,
    read: (_stream, buffer, offset, length, position) => {
      const end = Math.min(position + length, file.size);
      if (position >= end) return 0;
      const whole = blocks.get(-1);
      if (whole) {
        buffer.set(whole.subarray(position, end), offset);
        return end - position;
      }
      for (let b = Math.floor(position / BLOCK); b * BLOCK < end; b++) if (!blocks.has(b)) missing.add(b);
      if (missing.size) throw new h5.FS.ErrnoError(EIO);
      for (let at = position; at < end; ) {
        const b = Math.floor(at / BLOCK);
        const block = blocks.get(b)!;
        const n = Math.min(block.length - (at - b * BLOCK), end - at);
        buffer.set(block.subarray(at - b * BLOCK, at - b * BLOCK + n), offset + at - position);
        at += n;
      }
      return end - position;
    },
  };
  try {
    for (let pass = 1; ; pass++) {
      file.checkTime();
      missing.clear();
      let result: { entries: Entry[]; complete: boolean } | undefined;
      let failure: unknown;
      let opened: (H5Object & { close(): void }) | undefined;
      try {
        opened = new h5.File(`/${name}`, 'r');
        result = walk(opened, file);
      } catch (error) {
        if (error instanceof InspectionError) throw error;
        failure = error;
      } finally {
        try {
          opened?.close();
        } catch {
          // a file whose open failed half way has nothing to close
        }
      }
      if (!missing.size) {
        if (result) return { format: 'hdf5', superblock_version: superblock.version, superblock_offset: superblock.offset, objects: result.entries.length, complete: result.complete, tree: result.entries, passes: pass };
        expect(false, `HDF5 cannot read it: ${hdf5Reason(failure)}`);
      }
      expect(pass < MAX_PASSES, `its metadata is spread over more than ${MAX_PASSES} blocks`);
      for (const b of missing) blocks.set(b, await file.exactly(b * BLOCK, Math.min(BLOCK, file.size - b * BLOCK), 'a metadata block'));
    }
  } finally {
    h5.FS.unlink(`/${name}`);
  }
}

/** The superblock signature at 0, 512, 1024, 2048, ... (a user block may precede it). */
async function findSuperblock(file: RangedFile): Promise<{ offset: number; version: number }> {
  const sig = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];
  for (let at = 0; at + 9 <= file.size && at <= 64 * 1024 ** 2; at = at ? at * 2 : 512) {
    const head = await file.readAt(at, 9);
    if (sig.every((v, i) => head[i] === v)) return { offset: at, version: head[8] };
  }
  expect(false, 'it has no HDF5 superblock signature (\\x89HDF\\r\\n\\x1a\\n)');
}

/** The tree, breadth first by level, at most LIST_CAP objects and MAX_DEPTH levels. */
function walk(root: H5Object, file: RangedFile): { entries: Entry[]; complete: boolean } {
  const entries: Entry[] = [];
  let complete = true;
  let level: { path: string; group: H5Object }[] = [{ path: '', group: root }];
  for (let depth = 0; level.length; depth++) {
    if (depth >= MAX_DEPTH) {
      complete = false;
      break;
    }
    const next: typeof level = [];
    for (const { path, group } of level) {
      for (const key of group.keys!()) {
        if (entries.length >= LIST_CAP) return { entries, complete: false };
        if (entries.length % 64 === 0) file.checkTime();
        const child = group.get!(key);
        const childPath = `${path}/${key}`;
        if (!child) continue;
        if (child.type === 'Group') {
          entries.push({ path: childPath, type: 'group' });
          next.push({ path: childPath, group: child });
        } else if (child.type === 'Dataset') {
          entries.push({ path: childPath, type: 'dataset', shape: child.shape ?? null, dtype: dtypeOf(child), chunks: child.metadata?.chunks ?? null });
        } else if (child.type === 'Datatype') {
          entries.push({ path: childPath, type: 'datatype' });
        } else {
          entries.push({ path: childPath, type: 'link' });
        }
      }
    }
    level = next;
  }
  return { entries, complete };
}

/** numpy's notation: "<f4" a little-endian float32, "<i8" an int64, "|u1" a byte; "string", "compound", ... otherwise. */
function dtypeOf(dataset: H5Object): string {
  const m = dataset.metadata;
  if (!m) return 'unknown';
  const order = m.size === 1 ? '|' : m.littleEndian ? '<' : '>';
  if (m.type === H5T_INTEGER) return `${order}${m.signed ? 'i' : 'u'}${m.size}`;
  if (m.type === H5T_FLOAT) return `${order}f${m.size}`;
  return H5T_CLASSES[m.type ?? -1] ?? 'unknown';
}

/** HDF5's type classes (H5Tpublic.h). */
const H5T_INTEGER = 0;
const H5T_FLOAT = 1;
const H5T_CLASSES: Record<number, string> = { 2: 'time', 3: 'string', 4: 'bitfield', 5: 'opaque', 6: 'compound', 7: 'reference', 8: 'enum', 9: 'vlen', 10: 'array' };

/** The innermost message of HDF5's error stack ("truncated file: eof = 1500, ..."), or the error's own. */
function hdf5Reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = [...text.matchAll(/#\d+: .*? in [\w.]+\(\): (.*)$/gm)].map((m) => m[1].trim());
  return (lines.at(-1) ?? text).slice(0, 300);
}
