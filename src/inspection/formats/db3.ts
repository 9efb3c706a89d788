import YAML from 'yaml';
import { capped, expect, Inspection, InspectionError, LIST_CAP } from '../inspection';
import type { InspectionContext, RangedFile } from '../ranged-file';

/**
 * ROS 2 bags in rosbag2's SQLite storage (`.db3`): the SQLite header, then, for a file within
 * the read limit, the database opened with sql.js (SQLite compiled to WebAssembly; the file is
 * read whole into its memory file system) and rosbag2's tables queried: topics with type,
 * serialization format and message counts, start, end, duration.
 *
 * A file above the read limit is not opened (`opened: false`): counting a bag's messages
 * walks its messages table, which is most of the file. Instead, by ranged reads:
 * - the 100-byte SQLite header (page size, page count against the file's size: a truncated
 *   database fails), page 1 (the schema: rosbag2's topics and messages tables must be
 *   there) and the topics table's root page when it is a single page (topics with type and
 *   serialization format, no message counts);
 * - and, when the bag's `metadata.yaml` (rosbag2's own summary, written beside the .db3 in
 *   the bag's folder) is among the published files and lists this .db3, what it says: topics
 *   with message counts, start, duration (`source: "metadata.yaml"`).
 * `read` and `not_read` say what was and was not looked at.
 */
interface SqlJs {
  Database: new (data: Uint8Array) => {
    exec(sql: string): { columns: string[]; values: unknown[][] }[];
    close(): void;
  };
}

let sqlJs: Promise<SqlJs> | undefined;
function load(): Promise<SqlJs> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  sqlJs ??= (require('sql.js') as () => Promise<SqlJs>)();
  return sqlJs;
}

const HEADER = 'SQLite format 3\0';

export async function inspectDb3(file: RangedFile, context?: InspectionContext): Promise<Inspection> {
  expect(file.size >= 100 && new TextDecoder('latin1').decode(await file.readAt(0, 16)) === HEADER, 'it is not an SQLite database (a ROS 2 .db3 bag is one)');
  if (file.size > file.limits.maxReadBytes) return inspectLargeDb3(file, context);
  const bytes = await file.exactly(0, file.size, 'the database');
  const SQL = await load();
  let db: InstanceType<SqlJs['Database']> | undefined;
  try {
    db = new SQL.Database(bytes);
    const tables = new Set((db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? []).map((row) => String(row[0])));
    expect(tables.has('topics') && tables.has('messages'), `it is an SQLite database but not a ROS 2 bag: it has no ${tables.has('topics') ? 'messages' : 'topics'} table`);
    const distro = tables.has('schema') ? db.exec('SELECT ros_distro FROM schema LIMIT 1')[0]?.values[0]?.[0] ?? null : null;
    const rows = db.exec(`
      SELECT t.name, t.type, t.serialization_format, COUNT(m.id), MIN(m.timestamp) / 1000000, MAX(m.timestamp) - MIN(m.timestamp)
      FROM topics t LEFT JOIN messages m ON m.topic_id = t.id GROUP BY t.id ORDER BY t.id LIMIT ${LIST_CAP}`)[0]?.values ?? [];
    const span = db.exec('SELECT COUNT(*), MIN(timestamp) / 1000000, MAX(timestamp) / 1000000, MAX(timestamp) - MIN(timestamp) FROM messages')[0].values[0] as (number | null)[];
    const [messages, startMs, endMs, durationNs] = span;
    return {
      format: 'ros2_db3',
      opened: true,
      ros_distro: distro,
      messages,
      start: startMs !== null ? new Date(startMs).toISOString() : null,
      end: endMs !== null ? new Date(endMs).toISOString() : null,
      duration_s: durationNs !== null ? durationNs / 1e9 : null,
      topics: rows.map(([topic, type, serialization, count]) => ({ topic, type, serialization_format: serialization, messages: count })),
    };
  } catch (error) {
    if (error instanceof InspectionError) throw error;
    throw new InspectionError('invalid_format', `SQLite cannot read it: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
}


/** What the SQLite header says (sqlite.org/fileformat.html, 1.3). */
function sqliteHeader(header: Uint8Array, fileSize: number) {
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const raw = view.getUint16(16);
  const pageSize = raw === 1 ? 65536 : raw;
  expect(pageSize >= 512 && pageSize <= 65536 && (pageSize & (pageSize - 1)) === 0, `its SQLite header gives a page size of ${raw}, which SQLite never writes: it is corrupt`);
  const reserved = header[20];
  const changeCounter = view.getUint32(24);
  const inHeaderPages = view.getUint32(28);
  // The in-header page count is valid when "version-valid-for" equals the change counter (SQLite 3.7.0 and later).
  const pages = inHeaderPages > 0 && view.getUint32(92) === changeCounter ? inHeaderPages : Math.floor(fileSize / pageSize);
  expect(pages * pageSize <= fileSize, `its SQLite header counts ${pages} pages of ${pageSize} bytes (${pages * pageSize} bytes), the file has ${fileSize}: it is truncated`);
  const encoding = ({ 1: 'UTF-8', 2: 'UTF-16le', 3: 'UTF-16be' } as Record<number, string>)[view.getUint32(56)] ?? null;
  const version = view.getUint32(96);
  return { pageSize, usable: pageSize - reserved, pages, encoding, sqliteVersion: `${Math.floor(version / 1_000_000)}.${Math.floor(version / 1000) % 1000}.${version % 1000}` };
}

/** An SQLite varint (big-endian, 7 bits a byte, the ninth byte whole) at `at`: [value, next]. */
function varint(page: Uint8Array, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    expect(at + i < page.length, 'a record runs past its page: the database is corrupt');
    const byte = page[at + i];
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) return [value, at + i + 1];
  }
  return [value * 256 + page[at + 8], at + 9];
}

/**
 * The rows of a table b-tree leaf page (type 13) whose records are entirely on the page;
 * null for an interior page or a row that overflows (then the table is not read here).
 * `base` is where the b-tree page header starts (100 on page 1, after the database header).
 */
function leafRows(page: Uint8Array, base: number, usable: number): unknown[][] | null {
  if (page[base] !== 0x0d) return null;
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  const cells = view.getUint16(base + 3);
  const maxLocal = usable - 35;
  const rows: unknown[][] = [];
  const utf8 = new TextDecoder();
  for (let c = 0; c < cells; c++) {
    let at = view.getUint16(base + 8 + 2 * c);
    let payload: number;
    [payload, at] = varint(page, at);
    [, at] = varint(page, at); // rowid
    if (payload > maxLocal) return null;
    const start = at;
    let headerSize: number;
    [headerSize, at] = varint(page, at);
    const types: number[] = [];
    while (at < start + headerSize) {
      let type: number;
      [type, at] = varint(page, at);
      types.push(type);
    }
    at = start + headerSize;
    const row: unknown[] = [];
    for (const type of types) {
      const width = type === 0 || type === 8 || type === 9 ? 0 : type <= 4 ? type : type === 5 ? 6 : type <= 7 ? 8 : type >= 12 ? (type - 12 - (type % 2)) / 2 : 0;
      expect(at + width <= page.length, 'a record runs past its page: the database is corrupt');
      if (type >= 13 && type % 2 === 1) row.push(utf8.decode(page.subarray(at, at + width)));
      else if (type >= 1 && type <= 6) {
        let n = 0;
        for (let i = 0; i < width; i++) n = n * 256 + page[at + i];
        if (page[at] & 0x80) n -= 2 ** (8 * width);
        row.push(n);
      } else row.push(type === 8 ? 0 : type === 9 ? 1 : null);
      at += width;
    }
    rows.push(row);
  }
  return rows;
}

const METADATA_MAX_BYTES = 1024 ** 2;

/** rosbag2's metadata.yaml (rosbag2_bagfile_information), when it lists this .db3: what it says of the bag and of this file. */
async function readMetadataYaml(yamlFile: RangedFile, db3Name: string): Promise<{ fields: Record<string, unknown>; note?: string }> {
  const note = (why: string) => ({ fields: {}, note: `metadata.yaml beside it was not used: ${why}` });
  if (yamlFile.size > METADATA_MAX_BYTES) return note(`it has ${yamlFile.size} bytes, more than the ${METADATA_MAX_BYTES} read`);
  let info: any;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(await yamlFile.exactly(0, yamlFile.size, 'metadata.yaml'));
    info = YAML.parse(text, { maxAliasCount: 100, intAsBigInt: true })?.rosbag2_bagfile_information;
  } catch (error) {
    return note(`it is not YAML: ${(error as Error).message}`);
  }
  if (!info || typeof info !== 'object') return note('it has no rosbag2_bagfile_information');
  const base = db3Name.slice(db3Name.lastIndexOf('/') + 1);
  const paths: string[] = Array.isArray(info.relative_file_paths) ? info.relative_file_paths.map(String) : [];
  if (!paths.some((p) => p === base || p.endsWith(`/${base}`))) return note(`its relative_file_paths do not list ${base}`);
  const ns = (v: unknown) => (v === undefined || v === null || !Number.isFinite(Number(v)) ? null : BigInt(String(v)));
  const iso = (n: bigint | null) => (n === null ? null : new Date(Number(n / 1_000_000n)).toISOString());
  const start = ns(info.starting_time?.nanoseconds_since_epoch);
  const duration = ns(info.duration?.nanoseconds);
  const topics = (Array.isArray(info.topics_with_message_count) ? info.topics_with_message_count : []).map((t: any) => ({
    topic: String(t?.topic_metadata?.name ?? ''),
    type: String(t?.topic_metadata?.type ?? ''),
    serialization_format: String(t?.topic_metadata?.serialization_format ?? ''),
    messages: Number.isFinite(Number(t?.message_count)) ? Number(t.message_count) : null,
  }));
  const own = (Array.isArray(info.files) ? info.files : []).find((f: any) => String(f?.path ?? '').endsWith(base));
  return {
    fields: {
      source: 'metadata.yaml',
      storage_identifier: info.storage_identifier ?? null,
      bag_files: paths.length,
      messages: Number.isFinite(Number(info.message_count)) ? Number(info.message_count) : null,
      start: iso(start),
      end: start !== null && duration !== null ? iso(start + duration) : null,
      duration_s: duration !== null ? Number(duration) / 1e9 : null,
      topics: capped(topics),
      ...(own && { file: { messages: Number(own.message_count ?? 0), start: iso(ns(own.starting_time?.nanoseconds_since_epoch)), duration_s: Number(ns(own.duration?.nanoseconds) ?? 0n) / 1e9 } }),
    },
  };
}

/** A .db3 above the read limit: its header, schema page and topics page by ranged reads, and its bag's metadata.yaml when published beside it. */
async function inspectLargeDb3(file: RangedFile, context?: InspectionContext): Promise<Inspection> {
  const header = sqliteHeader(await file.exactly(0, 100, 'the SQLite header'), file.size);
  const read = ['the SQLite header'];
  const notRead = [`the database's pages (${file.size} bytes, more than the ${file.limits.maxReadBytes} a file may be read): it was not opened with SQLite`];
  const page1 = await file.exactly(0, header.pageSize, 'the schema page');
  read.push('page 1 (the schema)');
  const schema = leafRows(page1, 100, header.usable);
  let tables: string[] | null = null;
  let topics: { topic: string; type: string; serialization_format: string; messages: null }[] | null = null;
  if (schema) {
    // sqlite_master rows: type, name, tbl_name, rootpage, sql.
    tables = schema.filter((r) => r[0] === 'table').map((r) => String(r[1]));
    expect(tables.includes('topics') && tables.includes('messages'), `it is an SQLite database but not a ROS 2 bag: it has no ${tables.includes('topics') ? 'messages' : 'topics'} table`);
    const root = Number(schema.find((r) => r[0] === 'table' && r[1] === 'topics')?.[3]);
    if (root >= 1 && root <= header.pages) {
      const rows = leafRows(await file.exactly((root - 1) * header.pageSize, header.pageSize, 'the topics page'), root === 1 ? 100 : 0, header.usable);
      read.push('the topics table');
      // rosbag2's topics table: id, name, type, serialization_format, offered_qos_profiles, ...
      if (rows) topics = capped(rows.map((r) => ({ topic: String(r[1]), type: String(r[2]), serialization_format: String(r[3]), messages: null })));
      else notRead.push('the topics table (more than one page)');
    }
  } else notRead.push('the schema (more than one page): tables not listed');
  const yamlName = file.name.slice(0, file.name.lastIndexOf('/') + 1) + 'metadata.yaml';
  const yamlFile = context?.sibling(yamlName);
  const metadata = yamlFile ? await readMetadataYaml(yamlFile, file.name) : { fields: {}, note: undefined };
  if (yamlFile && !metadata.note) read.push('metadata.yaml beside it (rosbag2\'s summary of the bag)');
  if (!('source' in metadata.fields)) notRead.push('the messages table: message counts, start, end and duration are not known (no metadata.yaml beside it lists this file)');
  return {
    format: 'ros2_db3',
    opened: false,
    source: 'sqlite_header',
    page_size: header.pageSize,
    pages: header.pages,
    text_encoding: header.encoding,
    sqlite_version: header.sqliteVersion,
    tables,
    messages: null,
    start: null,
    end: null,
    duration_s: null,
    topics,
    ...metadata.fields,
    read,
    not_read: metadata.note ? [...notRead, metadata.note] : notRead,
  };
}
