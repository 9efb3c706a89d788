import type { FileMetaData, SchemaTree } from 'hyparquet';
import { capped, expect, Inspection, InspectionError } from '../inspection';
import { importEsm } from '../esm';
import type { RangedFile } from '../ranged-file';

type Hyparquet = typeof import('hyparquet');

/** The footer is fetched with this much of the file's end first: one read for most files. */
const INITIAL_FETCH = 64 * 1024;

/**
 * Parquet (parquet.apache.org/docs/file-format): `PAR1` at both ends, then the footer's
 * FileMetaData read with hyparquet's parquetMetadataAsync through ranged reads (the last
 * 64 KiB, and the rest of the footer if it is longer; no column chunk is read): columns
 * (leaf paths) with their physical and logical types, rows, row groups.
 */
export async function inspectParquet(file: RangedFile): Promise<Inspection> {
  expect(file.size >= 12, 'it is too short to be Parquet');
  const ascii = (b: Uint8Array) => new TextDecoder('latin1').decode(b);
  expect(ascii(await file.readAt(0, 4)) === 'PAR1', 'it does not start with the Parquet magic PAR1');
  const tail = await file.readAt(file.size - 8, 8);
  expect(ascii(tail.subarray(4)) === 'PAR1', 'it does not end with the Parquet magic PAR1: truncated');
  const footer = new DataView(tail.buffer, tail.byteOffset, 8).getUint32(0, true);
  expect(footer + 12 <= file.size, `its footer claims ${footer} bytes, more than the file holds: truncated or corrupt`);

  const { parquetMetadataAsync, parquetSchema } = await importEsm<Hyparquet>('hyparquet');
  const buffer = {
    byteLength: file.size,
    slice: async (start: number, end?: number) => {
      const bytes = await file.exactly(start, (end ?? file.size) - start, 'the footer');
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
  let metadata: FileMetaData;
  let schema: SchemaTree;
  try {
    metadata = await parquetMetadataAsync(buffer, { initialFetchSize: Math.min(INITIAL_FETCH, file.size) });
    schema = parquetSchema(metadata);
  } catch (error) {
    if (error instanceof InspectionError) throw error;
    expect(false, `its footer cannot be read: ${(error as Error).message}`);
  }
  file.checkTime();
  const columns: { name: string; type: string; logical_type: string | null; repetition: string | null }[] = [];
  const leaves = (node: SchemaTree) => {
    if (!node.children.length) {
      const e = node.element;
      columns.push({
        name: node.path.join('.'),
        type: e.type ?? 'GROUP',
        logical_type: e.logical_type?.type ?? e.converted_type ?? null,
        repetition: e.repetition_type ?? null,
      });
    } else node.children.forEach(leaves);
  };
  schema.children.forEach(leaves);
  const rowGroupRows = metadata.row_groups.reduce((sum, group) => sum + Number(group.num_rows), 0);
  expect(rowGroupRows === Number(metadata.num_rows), `its row groups hold ${rowGroupRows} rows but its footer says ${metadata.num_rows}`);
  return {
    format: 'parquet',
    created_by: metadata.created_by ?? null,
    rows: Number(metadata.num_rows),
    row_groups: metadata.row_groups.length,
    columns: capped(columns),
    footer_bytes: footer,
  };
}
