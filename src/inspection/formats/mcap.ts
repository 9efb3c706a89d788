import { McapIndexedReader } from '@mcap/core';
import { capped, expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';

const MAGIC = [0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a];
const startsWith = (b: Uint8Array, sig: number[]) => sig.every((v, i) => b[i] === v);
const iso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();

/**
 * MCAP (mcap.dev/spec): the magic at both ends (an unclosed recording has no trailing
 * magic), then, for an indexed recording, its summary read with @mcap/core's
 * McapIndexedReader through ranged reads (footer, summary section; no chunk is read):
 * topics with schema and message counts, start, end and duration. A recording written
 * without a summary passes as `indexed: false`.
 */
export async function inspectMcap(file: RangedFile): Promise<Inspection> {
  expect(startsWith(await file.readAt(0, 8), MAGIC), 'it does not start with the MCAP magic');
  expect(file.size >= 16 && startsWith(await file.readAt(file.size - 8, 8), MAGIC), 'it does not end with the MCAP magic: truncated (a recording that was not closed)');
  // The footer record's content (summary_start u64, summary_offset_start u64, crc u32) sits just before the trailing magic.
  const footer = await file.exactly(file.size - 8 - 20, 20, 'the footer');
  const summaryStart = new DataView(footer.buffer, footer.byteOffset, 20).getBigUint64(0, true);
  if (summaryStart === 0n) return { format: 'mcap', indexed: false };
  let reader: McapIndexedReader;
  try {
    reader = await McapIndexedReader.Initialize({
      readable: { size: async () => BigInt(file.size), read: async (offset: bigint, length: bigint) => file.exactly(Number(offset), Number(length), 'a summary record') },
    });
  } catch (error) {
    if (error instanceof InspectionError) throw error;
    expect(false, `its summary cannot be read: ${(error as Error).message}`);
  }
  const stats = reader.statistics;
  const topics = [...reader.channelsById.values()].map((channel) => {
    const schema = reader.schemasById.get(channel.schemaId);
    return {
      topic: channel.topic,
      message_encoding: channel.messageEncoding,
      schema: schema?.name ?? null,
      schema_encoding: schema?.encoding ?? null,
      messages: stats ? Number(stats.channelMessageCounts.get(channel.id) ?? 0n) : null,
    };
  });
  const timed = stats && stats.messageCount > 0n;
  return {
    format: 'mcap',
    indexed: true,
    profile: reader.header.profile,
    library: reader.header.library,
    messages: stats ? Number(stats.messageCount) : null,
    start: timed ? iso(stats.messageStartTime) : null,
    end: timed ? iso(stats.messageEndTime) : null,
    duration_s: timed ? Number(stats.messageEndTime - stats.messageStartTime) / 1e9 : null,
    topics: capped(topics),
  };
}
