import { Bag } from '@foxglove/rosbag';
import { capped, expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';

const MAGIC = '#ROSBAG V2.0\n';
interface Time {
  sec: number;
  nsec: number;
}
const ns = (t: Time) => BigInt(t.sec) * 1_000_000_000n + BigInt(t.nsec);
const iso = (t: bigint) => new Date(Number(t / 1_000_000n)).toISOString();

/**
 * ROS 1 bag, format 2.0 (wiki.ros.org/Bags/Format/2.0): the magic, then the bag header and
 * the index section (connection and chunk-info records, at the end of the file) read with
 * @foxglove/rosbag's Bag through its Filelike interface, as ranged reads: no chunk (no
 * message) is read. Shown: topics with type and message counts (summed from the chunk
 * infos), start, end and duration. A bag not closed by its recorder has no index
 * (index_pos 0): it passes as `indexed: false` (`rosbag reindex` writes one).
 */
export async function inspectRosbag(file: RangedFile): Promise<Inspection> {
  expect(new TextDecoder('latin1').decode(await file.readAt(0, MAGIC.length)) === MAGIC, 'it does not start with "#ROSBAG V2.0", the ROS 1 bag header');
  // The Bag's reader is used as Bag.open uses it, but the header is read once and the index only when there is one.
  const { reader } = new Bag({ size: () => file.size, read: (offset: number, length: number) => file.readAt(offset, length) }, { parse: false });
  let header;
  try {
    header = await reader.readHeader();
  } catch (error) {
    if (error instanceof InspectionError) throw error;
    expect(false, `its bag header cannot be read: ${(error as Error).message}`);
  }
  if (header.indexPosition === 0) return { format: 'rosbag', version: '2.0', indexed: false };
  expect(header.indexPosition < file.size, `its index would start at byte ${header.indexPosition}, past the end of the file (${file.size} bytes): truncated`);
  let index: Awaited<ReturnType<typeof reader.readConnectionsAndChunkInfo>>;
  try {
    index = await reader.readConnectionsAndChunkInfo(header.indexPosition, header.connectionCount, header.chunkCount);
  } catch (error) {
    if (error instanceof InspectionError) throw error;
    expect(false, `its index cannot be read: ${(error as Error).message}`);
  }
  file.checkTime();
  const counts = new Map<number, number>();
  let start: bigint | undefined;
  let end: bigint | undefined;
  for (const info of index.chunkInfos) {
    for (const { conn, count } of info.connections) counts.set(conn, (counts.get(conn) ?? 0) + count);
    const s = ns(info.startTime);
    const e = ns(info.endTime);
    if (start === undefined || s < start) start = s;
    if (end === undefined || e > end) end = e;
  }
  const topics = new Map<string, { topic: string; type: string | null; md5sum: string | null; connections: number; messages: number }>();
  for (const connection of index.connections) {
    const topic = topics.get(connection.topic) ?? { topic: connection.topic, type: connection.type ?? null, md5sum: connection.md5sum ?? null, connections: 0, messages: 0 };
    topic.connections++;
    topic.messages += counts.get(connection.conn) ?? 0;
    topics.set(connection.topic, topic);
  }
  const messages = [...counts.values()].reduce((a, b) => a + b, 0);
  return {
    format: 'rosbag',
    version: '2.0',
    indexed: true,
    chunks: index.chunkInfos.length,
    messages,
    start: start !== undefined ? iso(start) : null,
    end: end !== undefined ? iso(end) : null,
    duration_s: start !== undefined && end !== undefined ? Number(end - start) / 1e9 : null,
    topics: capped([...topics.values()]),
  };
}
