import { ArrayBufferTarget as Mp4Target, Muxer as Mp4Muxer } from 'mp4-muxer';
import { ArrayBufferTarget as WebmTarget, Muxer as WebmMuxer } from 'webm-muxer';

/**
 * Real video containers written by muxer libraries (mp4-muxer, webm-muxer), from a few
 * synthetic encoded chunks: the container, its codec configuration and sample tables are what
 * a camera pipeline writes; the frames' bytes are not decodable pictures (no encoder runs
 * here), which a container's inspection never looks at.
 */

// An H.264 Baseline sequence and picture parameter set, for the avcC box a decoder needs.
const SPS = [0x67, 0x42, 0xc0, 0x1e, 0xd9, 0x01, 0x40, 0x7b, 0x20];
const PPS = [0x68, 0xce, 0x3c, 0x80];
const AVCC = Uint8Array.from([1, 0x42, 0xc0, 0x1e, 0xff, 0xe1, 0, SPS.length, ...SPS, 1, 0, PPS.length, ...PPS]);
function frame(i: number, size = 8): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0, 0, (size - 4) >> 8, (size - 4) & 0xff, i === 0 ? 0x65 : 0x41, i & 0xff, 0x80, 0x40]);
  return bytes;
}

export interface VideoOptions {
  width?: number;
  height?: number;
  fps?: number;
  frames?: number;
  /** Opus audio packets of 20 ms alongside. */
  audioPackets?: number;
  /** Bytes of each encoded frame (8 unless said). */
  frameBytes?: number;
}

/**
 * An MP4 with an H.264 track; `fastStart: false` puts the moov box after the media data (as a
 * recorder that did not know its length wrote it), 'in-memory' before it, 'fragmented' as moof
 * fragments.
 */
export function mp4Video(options: VideoOptions & { fastStart?: false | 'in-memory' | 'fragmented' } = {}): Uint8Array {
  const { width = 320, height = 240, fps = 30, frames = 10, audioPackets = 0, fastStart = false, frameBytes = 8 } = options;
  const target = new Mp4Target();
  const muxer = new Mp4Muxer({
    target,
    video: { codec: 'avc', width, height, frameRate: fps },
    audio: audioPackets ? { codec: 'opus', numberOfChannels: 2, sampleRate: 48000 } : undefined,
    fastStart,
  });
  const step = 1e6 / fps;
  for (let i = 0; i < frames; i++) {
    const meta = i === 0 ? { decoderConfig: { codec: 'avc1.42c01e', codedWidth: width, codedHeight: height, description: AVCC } } : undefined;
    muxer.addVideoChunkRaw(frame(i, frameBytes), i % fps === 0 ? 'key' : 'delta', Math.round(i * step), Math.round(step), meta);
    if (i < audioPackets) muxer.addAudioChunkRaw(Uint8Array.from([0xfc, i & 0xff]), 'key', i * 20_000, 20_000, i === 0 ? { decoderConfig: { codec: 'opus', numberOfChannels: 2, sampleRate: 48000 } } : undefined);
  }
  for (let i = frames; i < audioPackets; i++) muxer.addAudioChunkRaw(Uint8Array.from([0xfc, i & 0xff]), 'key', i * 20_000, 20_000);
  muxer.finalize();
  return new Uint8Array(target.buffer);
}

/** A WebM (VP9) or Matroska (H.264) file; `streaming` writes unknown-size Segment and Clusters, as a live recorder does. */
export function matroskaVideo(options: VideoOptions & { type?: 'webm' | 'matroska'; streaming?: boolean } = {}): Uint8Array {
  const { width = 320, height = 240, fps = 30, frames = 10, audioPackets = 0, type = 'webm', streaming = false, frameBytes = 8 } = options;
  const target = new WebmTarget();
  const muxer = new WebmMuxer({
    target,
    type,
    streaming,
    video: { codec: type === 'webm' ? 'V_VP9' : 'V_MPEG4/ISO/AVC', width, height, frameRate: fps },
    audio: audioPackets ? { codec: 'A_OPUS', numberOfChannels: 2, sampleRate: 48000 } : undefined,
  });
  const step = 1e6 / fps;
  for (let i = 0; i < frames; i++) {
    const meta = i === 0 && type === 'matroska' ? { decoderConfig: { codec: 'avc1.42c01e', codedWidth: width, codedHeight: height, description: AVCC } } : undefined;
    muxer.addVideoChunkRaw(frame(i, frameBytes), i % fps === 0 ? 'key' : 'delta', Math.round(i * step), meta);
    if (i < audioPackets) muxer.addAudioChunkRaw(Uint8Array.from([0xfc, i & 0xff]), 'key', i * 20_000);
  }
  muxer.finalize();
  return new Uint8Array(target.buffer);
}
