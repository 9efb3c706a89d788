import { expect, Inspection, InspectionError, LIST_CAP } from '../inspection';
import type { RangedFile } from '../ranged-file';

/**
 * ROS 2 bags in rosbag2's SQLite storage (`.db3`): the SQLite header, then, for a file within
 * the read limit, the database opened with sql.js (SQLite compiled to WebAssembly; the file is
 * read whole into its memory file system) and rosbag2's tables queried: topics with type,
 * serialization format and message counts, start, end, duration. A file above the read limit
 * is checked by its header only (`opened: false`): counting a bag's messages walks its
 * messages table, which is most of the file.
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

export async function inspectDb3(file: RangedFile): Promise<Inspection> {
  expect(file.size >= 100 && new TextDecoder('latin1').decode(await file.readAt(0, 16)) === HEADER, 'it is not an SQLite database (a ROS 2 .db3 bag is one)');
  if (file.size > file.limits.maxReadBytes) return { format: 'ros2_db3', opened: false, reason: `larger than the ${file.limits.maxReadBytes} bytes a file may be read: checked by its SQLite header only` };
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
