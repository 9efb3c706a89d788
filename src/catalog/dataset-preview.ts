import type { BlobStore } from '../storage/blob-store';
import { InspectionError, InspectionLimits } from '../inspection/inspection';
import { importEsm } from '../inspection/esm';
import { datasetLayout } from '../inspection/layout';
import { RangedFile } from '../inspection/ranged-file';
import type { DatasetSample, PublishedFile } from './events';

export type { DatasetSample } from './events';

type Hyparquet = typeof import('hyparquet');
type Json = Record<string, unknown>;

/** Rows a sample holds at most (issue 41): enough to see the data, not to take it. */
export const SAMPLE_ROWS = 20;
/** The sample's JSON is at most this long, rows, columns and notes included. */
export const SAMPLE_MAX_BYTES = 256 * 1024;
/** A CSV or JSONL sample is read from at most the file's first this many bytes. */
const TEXT_HEAD_BYTES = 256 * 1024;

const TABULAR = /\.(parquet|csv|jsonl)$/i;

/** Why a preview holds no video frame: said in the answer, not only in the docs. */
export const NO_VIDEO_FRAMES = 'No still frame of a video is included: extracting one needs a native video decoder, which the service does not run.';


/**
 * The sample of `files` (inspected already): the first tabular file's first SAMPLE_ROWS rows,
 * Parquet through hyparquet's ranged reads within `limits` (only the first row group's column
 * chunks are read), CSV and JSONL from the head of the file. Never throws: a file that cannot
 * be sampled gives a sample without rows and a note saying why.
 */
export async function datasetSample(store: BlobStore, files: PublishedFile[], limits: InspectionLimits): Promise<DatasetSample> {
  const notes: string[] = [];
  if (files.some((f) => /\.(mp4|webm|mkv)$/i.test(f.name))) notes.push(NO_VIDEO_FRAMES);
  const tabular = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).find((f) => TABULAR.test(f.name));
  const empty = (note?: string): DatasetSample => ({ file: tabular?.name ?? null, format: tabular ? formatOf(tabular.name) : null, columns: [], rows: [], total_rows: null, truncated: false, notes: note ? [...notes, note] : notes });
  if (!tabular) return empty();
  const file = RangedFile.ofStore(store, tabular.path, tabular.name, tabular.size, limits);
  try {
    const format = formatOf(tabular.name);
    const read = format === 'parquet' ? await parquetRows(file) : format === 'csv' ? await csvRows(file) : await jsonlRows(file);
    return capSample({ file: tabular.name, format, columns: read.columns, rows: read.rows.map(plain), total_rows: read.total, truncated: false, notes });
  } catch (error) {
    const reason = error instanceof InspectionError ? error.message : `it could not be read: ${(error as Error).message}`;
    return empty(`No rows of "${tabular.name}" are shown: ${reason}.`);
  }
}

function formatOf(name: string): 'parquet' | 'csv' | 'jsonl' {
  return name.toLowerCase().endsWith('.parquet') ? 'parquet' : name.toLowerCase().endsWith('.csv') ? 'csv' : 'jsonl';
}

async function parquetRows(file: RangedFile): Promise<{ columns: string[]; rows: Json[]; total: number | null }> {
  const { parquetMetadataAsync, parquetReadObjects, parquetSchema } = await importEsm<Hyparquet>('hyparquet');
  const buffer = {
    byteLength: file.size,
    slice: async (start: number, end?: number) => {
      const bytes = await file.exactly(start, (end ?? file.size) - start, 'a column chunk');
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
  const metadata = await parquetMetadataAsync(buffer, { initialFetchSize: Math.min(64 * 1024, file.size) });
  const columns = parquetSchema(metadata).children.map((c) => c.element.name);
  const rows = (await parquetReadObjects({ file: buffer, metadata, rowStart: 0, rowEnd: Math.min(SAMPLE_ROWS, Number(metadata.num_rows)) })) as Json[];
  return { columns, rows, total: Number(metadata.num_rows) };
}

async function head(file: RangedFile): Promise<string> {
  const bytes = await file.readAt(0, TEXT_HEAD_BYTES);
  let text = new TextDecoder('utf-8').decode(bytes);
  // A head that stops mid-file stops mid-line: the partial last line is not a row.
  if (bytes.length < file.size) text = text.slice(0, Math.max(0, text.lastIndexOf('\n')));
  return text;
}

/** RFC 4180 fields: quoted fields may hold commas, doubled quotes and newlines. */
function csvRecords(text: string, max: number): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length && records.length < max; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') record.push(field), (field = '');
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(field), (field = '');
      if (record.length > 1 || record[0] !== '') records.push(record);
      record = [];
    } else field += c;
  }
  if (records.length < max && (field !== '' || record.length)) records.push([...record, field]);
  return records;
}

async function csvRows(file: RangedFile): Promise<{ columns: string[]; rows: Json[]; total: null }> {
  const [columns = [], ...records] = csvRecords(await head(file), SAMPLE_ROWS + 1);
  return { columns, rows: records.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i] ?? null]))), total: null };
}

async function jsonlRows(file: RangedFile): Promise<{ columns: string[]; rows: Json[]; total: null }> {
  const rows: Json[] = [];
  for (const line of (await head(file)).split('\n')) {
    if (rows.length >= SAMPLE_ROWS) break;
    if (!line.trim()) continue;
    const value: unknown = JSON.parse(line);
    rows.push(value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : { value });
  }
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return { columns, rows, total: null };
}

/** A value as plain JSON: bigints as numbers (strings beyond 2^53), bytes as a note of their length, dates as ISO text. */
function plainValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return `<${v.length} bytes>`;
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v as ArrayLike<unknown>, plainValue);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainValue(x)]));
  return v ?? null;
}

function plain(row: Json): Json {
  return plainValue(row) as Json;
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * Holds the sample to SAMPLE_MAX_BYTES: whole rows are dropped from the end; when not even
 * the first row fits, the first row keeps as many columns as fit. Either is said in a note.
 */
export function capSample(sample: DatasetSample): DatasetSample {
  if (bytesOf(sample) <= SAMPLE_MAX_BYTES) return sample;
  const base = { ...sample, rows: [] as Json[], truncated: true };
  const note = (text: string) => ({ ...base, notes: [...sample.notes, text] });
  const rowNote = (kept: number) => `Only the first ${kept} of ${sample.rows.length} rows are shown: the sample is held to ${SAMPLE_MAX_BYTES / 1024} KiB.`;
  // The note's length does not depend on which count it names by more than a few digits: reserve for it.
  let budget = SAMPLE_MAX_BYTES - bytesOf(note(rowNote(sample.rows.length))) - 16;
  const kept: Json[] = [];
  for (const row of sample.rows) {
    const size = bytesOf(row) + 1;
    if (size > budget) break;
    kept.push(row);
    budget -= size;
  }
  if (kept.length) return { ...note(rowNote(kept.length)), rows: kept };
  const first = sample.rows[0];
  const columnNote = (shown: number) => `Only ${shown} of ${Object.keys(first).length} columns of the first row are shown: one row is more than the ${SAMPLE_MAX_BYTES / 1024} KiB the sample is held to.`;
  budget = SAMPLE_MAX_BYTES - bytesOf(note(columnNote(Object.keys(first).length))) - 16;
  const partial: Json = {};
  for (const [key, value] of Object.entries(first)) {
    const size = bytesOf({ [key]: value });
    if (size > budget) break;
    partial[key] = value;
    budget -= size;
  }
  return { ...note(columnNote(Object.keys(partial).length)), rows: Object.keys(partial).length ? [partial] : [] };
}

/**
 * What the layout knows as one summary (issue 41 item 5): episodes, frames, fps, duration,
 * features or columns with their types, topics with message counts; null where it does not know.
 */
export function datasetSummary(files: PublishedFile[]): Json {
  const layout = datasetLayout(files);
  const firstTabular = [...files].sort((a, b) => (a.name < b.name ? -1 : 1)).find((f) => TABULAR.test(f.name) && f.inspection);
  const columns = (firstTabular?.inspection?.columns as unknown[] | undefined)?.map((c) =>
    typeof c === 'string' ? { name: c, type: null } : { name: (c as Json).name, type: (c as Json).logical_type ?? (c as Json).type ?? null },
  );
  const summary: Json = {
    files: files.length,
    total_bytes: files.reduce((n, f) => n + f.size, 0),
    episodes: null,
    frames: null,
    fps: null,
    duration_s: null,
    features: null,
    columns: columns ?? null,
    topics: null,
  };
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  switch (layout.kind) {
    case 'lerobot': {
      const frames = num(layout.frames);
      const fps = num(layout.fps);
      return { ...summary, episodes: num(layout.episodes), frames, fps, duration_s: frames !== null && fps ? Math.round((frames / fps) * 1000) / 1000 : null, features: layout.features ?? null };
    }
    case 'rlds': {
      const features = files.find((f) => f.inspection?.tfds_features)?.inspection?.tfds_features ?? null;
      return { ...summary, episodes: num(layout.episodes), splits: layout.splits, features };
    }
    case 'robomimic':
      return { ...summary, episodes: num(layout.demos), features: { actions: layout.actions, observations: layout.observations } };
    case 'rosbag':
      return { ...summary, duration_s: num(layout.duration_s), topics: layout.topics };
    default:
      return summary;
  }
}
