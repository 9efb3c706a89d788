import { Decoder } from 'ts-ebml';
import { capped, expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';
import { mp4box } from './mp4box';

/**
 * Video containers (issue 41): MP4 read with MP4Box.js, WebM and Matroska with ts-ebml, never
 * by running ffmpeg. Both are read by range: the container's top-level structure is walked by
 * its headers (box or element sizes) and only the parts that describe the streams are fetched,
 * so a 2 GiB recording costs its movie header, not its frames.
 *
 * Shown: `streams [{ id, type, codec, width, height, frames, fps, duration_s, ... }]`, the
 * first video stream's `codec`, `width`, `height`, `frames`, and the file's `duration_s`.
 */

const MAX_TOP_LEVEL = 100_000;
const MAX_DESCRIPTION_BYTES = 16 * 1024 ** 2;

export interface VideoStream {
  id: number;
  type: string;
  codec: string | null;
  width?: number | null;
  height?: number | null;
  frames: number | null;
  fps?: number | null;
  duration_s?: number | null;
  sample_rate?: number | null;
  channels?: number | null;
  language?: string | null;
}

function summary(format: string, fields: Record<string, unknown>, streams: VideoStream[]): Inspection {
  const video = streams.find((s) => s.type === 'video');
  return {
    format,
    ...fields,
    codec: video?.codec ?? null,
    width: video?.width ?? null,
    height: video?.height ?? null,
    frames: video?.frames ?? null,
    streams: capped(streams, 100),
  };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

// ---------------------------------------------------------------------------------------------
// MP4 (ISO base media file format, ISO/IEC 14496-12)

/** Box types that may stand at the top level of an ISO BMFF file. */
const MP4_TOP_LEVEL = new Set(['ftyp', 'styp', 'moov', 'mdat', 'free', 'skip', 'wide', 'pdin', 'uuid', 'meta', 'moof', 'mfra', 'sidx', 'ssix', 'prft', 'emsg', 'meco', 'jumb', 'junk', 'pnot', 'PICT']);

interface Box {
  type: string;
  offset: number;
  size: number;
}

/**
 * MP4: the top-level boxes walked by their headers (16 bytes a box, ranged reads: `mdat` is
 * stepped over wherever it is, before or after `moov`), then `ftyp`, `moov` and any `moof`
 * (fragmented MP4) fetched and handed to MP4Box.js. Frames are the video track's sample count
 * (`moov`'s sample tables, or the fragments' runs).
 */
export async function inspectMp4(file: RangedFile): Promise<Inspection> {
  expect(file.size >= 8, 'it is too short to hold an MP4 box');
  const boxes: Box[] = [];
  let at = 0;
  while (at < file.size) {
    if (boxes.length >= MAX_TOP_LEVEL) throw new InspectionError('inspection_limit_exceeded', `it has more than ${MAX_TOP_LEVEL} top-level boxes`);
    if (boxes.length % 1024 === 0) file.checkTime();
    expect(at + 8 <= file.size, `the box header at byte ${at} is cut off: truncated`);
    const header = await file.exactly(at, Math.min(16, file.size - at), `the box header at byte ${at}`);
    const view = new DataView(header.buffer, header.byteOffset, header.length);
    const type = String.fromCharCode(...header.subarray(4, 8));
    if (boxes.length === 0) expect(MP4_TOP_LEVEL.has(type), `it does not start with an MP4 box (found ${JSON.stringify(printable(header.subarray(4, 8)))} where "ftyp" belongs)`);
    else expect(/^[\x20-\x7e]{4}$/.test(type), `the box at byte ${at} has no box type (found ${JSON.stringify(printable(header.subarray(4, 8)))}): corrupt`);
    let size = view.getUint32(0);
    let headerSize = 8;
    if (size === 1) {
      expect(header.length >= 16, `the box header at byte ${at} is cut off: truncated`);
      size = Number(view.getBigUint64(8));
      headerSize = 16;
    } else if (size === 0) {
      size = file.size - at;
    }
    expect(size >= headerSize, `the "${type}" box at byte ${at} declares ${size} bytes, less than its own header: corrupt`);
    expect(at + size <= file.size, `the "${type}" box at byte ${at} declares ${size} bytes, past the end of the file (${file.size} bytes): truncated`);
    boxes.push({ type, offset: at, size });
    at += size;
  }
  const moov = boxes.find((b) => b.type === 'moov');
  expect(moov, boxes.some((b) => b.type === 'mdat') ? 'it has media data but no "moov" box (the movie header): the recording was not finished' : 'it has no "moov" box (the movie header)');
  const wanted = boxes.filter((b) => b.type === 'ftyp' || b.type === 'moov' || b.type === 'moof');
  const total = wanted.reduce((n, b) => n + b.size, 0);
  if (total > MAX_DESCRIPTION_BYTES) throw new InspectionError('inspection_limit_exceeded', `its movie header and fragment headers take ${total} bytes, more than the ${MAX_DESCRIPTION_BYTES} an inspection reads of them`);
  const parts = await Promise.all(wanted.map((b) => file.exactly(b.offset, b.size, `the "${b.type}" box`)));
  const joined = new Uint8Array(total);
  let o = 0;
  for (const part of parts) {
    joined.set(part, o);
    o += part.length;
  }
  const info = await parseMovie(joined);
  const fragmented = info.isFragmented || boxes.some((b) => b.type === 'moof');
  const streams: VideoStream[] = info.tracks.map((track) => {
    const frames = track.nb_samples;
    const duration = track.timescale ? track.samples_duration / track.timescale : null;
    const stream: VideoStream = { id: track.id, type: track.type ?? 'other', codec: track.codec || null, frames, duration_s: duration === null ? null : round3(duration), language: track.language || null };
    if (track.video) {
      stream.width = track.video.width || track.track_width || null;
      stream.height = track.video.height || track.track_height || null;
      stream.fps = duration && frames ? round3(frames / duration) : null;
    }
    if (track.audio) {
      stream.sample_rate = track.audio.sample_rate ?? null;
      stream.channels = track.audio.channel_count ?? null;
    }
    return stream;
  });
  const movieDuration = info.timescale ? info.duration / info.timescale : 0;
  const longest = Math.max(0, ...streams.map((s) => s.duration_s ?? 0));
  return summary('mp4', { brands: [...new Set(info.brands)], fragmented, duration_s: round3(movieDuration || longest) }, streams);
}

interface Mp4Track {
  id: number;
  type?: string;
  codec: string;
  nb_samples: number;
  samples_duration: number;
  timescale: number;
  language: string;
  track_width: number;
  track_height: number;
  video?: { width: number; height: number };
  audio?: { sample_rate: number; channel_count: number };
}

interface Mp4Info {
  duration: number;
  timescale: number;
  isFragmented: boolean;
  brands: string[];
  tracks: Mp4Track[];
}

/** `ftyp` + `moov` (+ `moof`s) through MP4Box.js, which adds the fragments' runs to each track's samples. */
async function parseMovie(bytes: Uint8Array): Promise<Mp4Info> {
  const isoFile = (await mp4box()).createFile();
  let failure: string | null = null;
  isoFile.onError = (_module: string, message: string) => {
    failure = message;
  };
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer & { fileStart: number };
  buffer.fileStart = 0;
  try {
    isoFile.appendBuffer(buffer);
    isoFile.flush();
  } catch (error) {
    expect(false, `MP4Box.js cannot read its movie header: ${(error as Error).message}`);
  }
  expect(!failure, `MP4Box.js cannot read its movie header: ${failure}`);
  const info = isoFile.getInfo() as unknown as Mp4Info;
  expect(info && Array.isArray(info.tracks), 'MP4Box.js found no movie in its "moov" box');
  return info;
}

function printable(bytes: Uint8Array): string {
  return [...bytes].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('');
}

// ---------------------------------------------------------------------------------------------
// WebM / Matroska (RFC 9559, EBML RFC 8794)

const EBML_MAGIC = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const INFO = 0x1549a966;
const TRACKS = 0x1654ae6b;
const CLUSTER = 0x1f43b675;
const SIMPLE_BLOCK = 0xa3;
const BLOCK_GROUP = 0xa0;
const BLOCK = 0xa1;
/** Elements that stand directly in a Segment: an unknown-size Cluster ends where one of them begins. */
const SEGMENT_CHILDREN = new Set([0x114d9b74, INFO, TRACKS, CLUSTER, 0x1c53bb6b, 0x1254c367, 0x1043a770, 0x1941a469]);

interface Header {
  id: number;
  /** null: unknown size (a live recording's Segment or Cluster). */
  size: number | null;
  headerSize: number;
}

/** An EBML element header (ID and size vints) at the start of bytes; null when cut off. */
function elementHeader(bytes: Uint8Array, at: number): Header | null {
  const first = bytes[at];
  if (first === undefined) return null;
  const idLength = Math.clz32(first) - 23;
  expect(idLength >= 1 && idLength <= 4, `byte ${at} starts no EBML element ID: corrupt`);
  if (at + idLength >= bytes.length) return null;
  let id = 0;
  for (let i = 0; i < idLength; i++) id = id * 256 + bytes[at + i];
  const sizeFirst = bytes[at + idLength];
  const sizeLength = Math.clz32(sizeFirst) - 23;
  expect(sizeLength >= 1 && sizeLength <= 8, `the element at byte ${at} has no valid size: corrupt`);
  if (at + idLength + sizeLength > bytes.length) return null;
  let size = sizeFirst & (0xff >> sizeLength);
  let allOnes = size === 0xff >> sizeLength;
  for (let i = 1; i < sizeLength; i++) {
    const b = bytes[at + idLength + i];
    size = size * 256 + b;
    if (b !== 0xff) allOnes = false;
  }
  return { id, size: allOnes ? null : size, headerSize: idLength + sizeLength };
}

async function headerAt(file: RangedFile, at: number, what: string): Promise<Header> {
  const bytes = await file.readAt(at, 12);
  const header = elementHeader(bytes, 0);
  expect(header, `${what} at byte ${at} is cut off: truncated`);
  return header;
}

/** Decodes one element's bytes with ts-ebml. */
function decode(bytes: Uint8Array, what: string): ReturnType<Decoder['decode']> {
  try {
    return new Decoder().decode(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  } catch (error) {
    expect(false, `ts-ebml cannot read ${what}: ${(error as Error).message}`);
  }
}

/**
 * WebM and Matroska: the EBML header (its DocType must be `webm` or `matroska`), then the
 * Segment's children walked by their headers: Info (timestamp scale, duration) and Tracks
 * (codec, resolution, sample rate, default duration) fetched and decoded with ts-ebml; the
 * Clusters read one by one, and their (Simple)Blocks counted by track (laced blocks by their
 * frames), while the file is within the read limit. Above it, Clusters are stepped over and
 * `frames` is null (`frames_counted: false`): Matroska keeps no frame count of its own.
 */
export async function inspectMatroska(file: RangedFile): Promise<Inspection> {
  const head = await file.readAt(0, 4);
  expect(head.length === 4 && new DataView(head.buffer, head.byteOffset, 4).getUint32(0) === EBML_MAGIC, 'it does not start with the EBML magic (1A 45 DF A3)');
  const ebml = await headerAt(file, 0, 'the EBML header');
  expect(ebml.size !== null && ebml.size <= 4096, 'its EBML header has no size or a size over 4 KiB: corrupt');
  const ebmlBytes = await file.exactly(0, ebml.headerSize + ebml.size, 'the EBML header');
  const docType = decode(ebmlBytes, 'its EBML header').find((e) => e.name === 'DocType');
  const doctype = docType && 'value' in docType ? String(docType.value) : null;
  expect(doctype === 'webm' || doctype === 'matroska', `its EBML DocType is ${JSON.stringify(doctype)}, not "webm" or "matroska"`);

  const segmentAt = ebml.headerSize + ebml.size;
  const segment = await headerAt(file, segmentAt, 'the Segment');
  expect(segment.id === SEGMENT, `the element after the EBML header (byte ${segmentAt}) is not a Segment: corrupt`);
  const segmentEnd = segment.size === null ? file.size : segmentAt + segment.headerSize + segment.size;
  expect(segmentEnd <= file.size, `its Segment declares ${segment.size} bytes, past the end of the file (${file.size} bytes): truncated`);

  const countFrames = file.size <= file.limits.maxReadBytes;
  const frames = new Map<number, number>();
  let info: ReturnType<Decoder['decode']> | null = null;
  let tracks: ReturnType<Decoder['decode']> | null = null;
  let framesCounted = countFrames;
  let at = segmentAt + segment.headerSize;
  let walked = 0;
  while (at < segmentEnd) {
    if (++walked > MAX_TOP_LEVEL) throw new InspectionError('inspection_limit_exceeded', `its Segment has more than ${MAX_TOP_LEVEL} elements`);
    if (walked % 256 === 0) file.checkTime();
    const element = await headerAt(file, at, 'an element of the Segment');
    const dataAt = at + element.headerSize;
    if (element.size === null) {
      expect(element.id === CLUSTER, `the element at byte ${at} has an unknown size and is not a Cluster: corrupt`);
      if (!countFrames) {
        framesCounted = false;
        break;
      }
      // A live recording's Cluster ends where the next Segment-level element begins.
      const rest = await file.readAt(dataAt, segmentEnd - dataAt);
      at = dataAt + countBlocks(rest, frames, true);
      continue;
    }
    const end = dataAt + element.size;
    expect(end <= segmentEnd, `the element at byte ${at} declares ${element.size} bytes, past the end of its Segment: truncated`);
    if (element.id === INFO || element.id === TRACKS) {
      const what = element.id === INFO ? 'its Info' : 'its Tracks';
      if (element.size > MAX_DESCRIPTION_BYTES) throw new InspectionError('inspection_limit_exceeded', `${what} element takes ${element.size} bytes, more than the ${MAX_DESCRIPTION_BYTES} an inspection reads of it`);
      const decoded = decode(await file.exactly(at, end - at, what), what);
      if (element.id === INFO) info = decoded;
      else tracks = decoded;
    } else if (element.id === CLUSTER && countFrames) {
      countBlocks(await file.exactly(dataAt, element.size, `the Cluster at byte ${at}`), frames, false);
    } else if (element.id === CLUSTER) {
      framesCounted = false;
    }
    at = end;
  }
  expect(tracks, 'it has no Tracks element: there are no streams to play');

  let timestampScale = 1_000_000;
  let durationTicks: number | null = null;
  const fields: Record<string, unknown> = {};
  for (const e of info ?? []) {
    if (!('value' in e)) continue;
    if (e.name === 'TimestampScale' || e.name === 'TimecodeScale') timestampScale = Number(e.value);
    else if (e.name === 'Duration') durationTicks = Number(e.value);
    else if (e.name === 'MuxingApp') fields.muxing_app = String(e.value);
    else if (e.name === 'WritingApp') fields.writing_app = String(e.value);
  }
  const streams: VideoStream[] = [];
  let current: (VideoStream & { defaultDuration?: number }) | null = null;
  for (const e of tracks) {
    if (e.name === 'TrackEntry' && e.type === 'm') {
      if (!e.isEnd) current = { id: 0, type: 'other', codec: null, frames: null };
      else if (current) {
        const { defaultDuration, ...stream } = current;
        if (stream.type === 'video') stream.fps = defaultDuration ? round3(1e9 / defaultDuration) : null;
        stream.frames = framesCounted ? (frames.get(stream.id) ?? 0) : null;
        streams.push(stream);
        current = null;
      }
      continue;
    }
    if (!current || !('value' in e)) continue;
    switch (e.name) {
      case 'TrackNumber':
        current.id = Number(e.value);
        break;
      case 'TrackType':
        current.type = TRACK_TYPES[Number(e.value)] ?? 'other';
        break;
      case 'CodecID':
        current.codec = String(e.value);
        break;
      case 'PixelWidth':
        current.width = Number(e.value);
        break;
      case 'PixelHeight':
        current.height = Number(e.value);
        break;
      case 'SamplingFrequency':
        current.sample_rate = Number(e.value);
        break;
      case 'Channels':
        current.channels = Number(e.value);
        break;
      case 'DefaultDuration':
        current.defaultDuration = Number(e.value);
        break;
      case 'Language':
        current.language = String(e.value);
        break;
    }
  }
  expect(streams.length > 0, 'its Tracks element holds no track');
  const duration = durationTicks === null ? null : round3((durationTicks * timestampScale) / 1e9);
  return summary(doctype === 'webm' ? 'webm' : 'matroska', { doctype, duration_s: duration, frames_counted: framesCounted, ...fields }, streams);
}

const TRACK_TYPES: Record<number, string> = { 1: 'video', 2: 'audio', 3: 'complex', 16: 'logo', 17: 'subtitle', 18: 'buttons', 32: 'control', 33: 'metadata' };

/**
 * Counts a Cluster's frames by track into counts. For an unknown-size Cluster (open), the walk
 * stops at the first Segment-level element; answers the bytes walked.
 */
function countBlocks(bytes: Uint8Array, counts: Map<number, number>, open: boolean): number {
  let at = 0;
  while (at < bytes.length) {
    const child = elementHeader(bytes, at);
    expect(child, `a Cluster's element at byte ${at} is cut off: truncated`);
    if (open && (child.id === CLUSTER ? at > 0 : SEGMENT_CHILDREN.has(child.id))) return at;
    expect(child.size !== null, `a Cluster's element has an unknown size: corrupt`);
    const dataAt = at + child.headerSize;
    const end = dataAt + child.size;
    expect(end <= bytes.length, `a Cluster's element declares ${child.size} bytes, past the end of the Cluster: truncated`);
    if (child.id === SIMPLE_BLOCK) countBlock(bytes.subarray(dataAt, end), counts);
    else if (child.id === BLOCK_GROUP) {
      const group = bytes.subarray(dataAt, end);
      let g = 0;
      while (g < group.length) {
        const inner = elementHeader(group, g);
        expect(inner && inner.size !== null && g + inner.headerSize + inner.size <= group.length, 'a BlockGroup is cut off: truncated');
        if (inner.id === BLOCK) countBlock(group.subarray(g + inner.headerSize, g + inner.headerSize + inner.size), counts);
        g += inner.headerSize + inner.size;
      }
    }
    at = end;
  }
  return at;
}

/** A Block's header: track number (vint), timecode (int16), flags; laced: the frame count - 1. */
function countBlock(block: Uint8Array, counts: Map<number, number>): void {
  const length = block.length ? Math.clz32(block[0]) - 23 : 0;
  expect(length >= 1 && length <= 8 && block.length >= length + 3, 'a Block is too short for its header: corrupt');
  let track = block[0] & (0xff >> length);
  for (let i = 1; i < length; i++) track = track * 256 + block[i];
  const flags = block[length + 2];
  const laced = (flags & 0x06) !== 0;
  const framesInBlock = laced ? (block[length + 3] ?? 0) + 1 : 1;
  counts.set(track, (counts.get(track) ?? 0) + framesInBlock);
}
