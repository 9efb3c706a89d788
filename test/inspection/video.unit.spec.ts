import { DEFAULT_LIMITS, InspectionLimits } from '../../src/inspection/inspection';
import { RangedFile } from '../../src/inspection/ranged-file';
import { inspectFile } from '../../src/inspection/registry';
import { minimalMp4 } from '../support/lerobot-fixture';
import { matroskaVideo, mp4Video } from '../support/video-files';

/**
 * Video containers (issue 41): MP4 read with MP4Box.js, WebM and Matroska with ts-ebml, from
 * files written by mp4-muxer and webm-muxer, and mislabelled and truncated copies of them.
 */
async function inspect(name: string, bytes: Uint8Array, limits: InspectionLimits = DEFAULT_LIMITS) {
  const file = RangedFile.ofBytes(name, bytes, limits);
  const outcome = await inspectFile(file);
  return { outcome, read: file.read };
}

async function passes(name: string, bytes: Uint8Array, limits?: InspectionLimits) {
  const { outcome, read } = await inspect(name, bytes, limits);
  if (!outcome.ok) throw new Error(`expected ${name} to pass: ${outcome.problem.message}`);
  return { inspection: outcome.inspection, read };
}

async function fails(name: string, bytes: Uint8Array) {
  const { outcome } = await inspect(name, bytes);
  if (outcome.ok) throw new Error(`expected ${name} to fail, got ${JSON.stringify(outcome.inspection)}`);
  expect(outcome.problem.message).toContain(`"${name}"`);
  return outcome.problem;
}

describe('MP4', () => {
  test('a recording with its moov after the media data shows codec, resolution, frames, duration and every stream', async () => {
    const { inspection } = await passes('episode_000000.mp4', mp4Video({ width: 640, height: 480, fps: 30, frames: 90, audioPackets: 150 }));
    expect(inspection).toEqual({
      format: 'mp4',
      brands: ['isom', 'avc1', 'mp41'],
      fragmented: false,
      duration_s: 3,
      codec: 'avc1.42c01e',
      width: 640,
      height: 480,
      frames: 90,
      streams: [
        { id: 1, type: 'video', codec: 'avc1.42c01e', width: 640, height: 480, frames: 90, fps: 30, duration_s: 3, language: 'und' },
        { id: 2, type: 'audio', codec: 'Opus', frames: 150, duration_s: 3, sample_rate: 48000, channels: 2, language: 'und' },
      ],
    });
  });

  test('only the box headers and the moov are read: the media data is stepped over, before or after the moov', async () => {
    for (const fastStart of [false, 'in-memory'] as const) {
      const video = mp4Video({ frames: 600, frameBytes: 8192, fastStart });
      expect(video.length).toBeGreaterThan(4 * 1024 ** 2);
      const { inspection, read } = await passes('front.mp4', video);
      expect(inspection).toMatchObject({ frames: 600, duration_s: 20 });
      expect(read).toBeLessThan(64 * 1024);
    }
  });

  test('a fragmented MP4 counts the frames of its fragments', async () => {
    const { inspection } = await passes('live.mp4', mp4Video({ fastStart: 'fragmented', frames: 90 }));
    expect(inspection).toMatchObject({ format: 'mp4', fragmented: true, frames: 90, streams: [{ type: 'video', frames: 90, fps: 30, duration_s: 3 }] });
  });

  test('a movie with no tracks yet (ftyp, moov with only its header, empty mdat) passes with no streams', async () => {
    const { inspection } = await passes('empty.mp4', minimalMp4(1500));
    expect(inspection).toEqual({ format: 'mp4', brands: ['isom', 'iso2', 'mp41'], fragmented: false, duration_s: 1.5, codec: null, width: null, height: null, frames: null, streams: [] });
  });

  test('a WebM file named .mp4 fails, naming the file', async () => {
    expect(await fails('clip.mp4', matroskaVideo())).toEqual({ code: 'invalid_format', message: expect.stringMatching(/^"clip.mp4" is not an MP4 video: it does not start with an MP4 box/) });
  });

  test('a truncated MP4 (the recorder stopped mid-write) fails, naming the box cut off', async () => {
    const video = mp4Video({ frames: 60, frameBytes: 1024 });
    expect((await fails('cut.mp4', video.subarray(0, video.length - 200))).message).toMatch(/^"cut.mp4" is not an MP4 video: the "moov" box at byte \d+ declares \d+ bytes, past the end of the file .*truncated/);
    expect((await fails('cut.mp4', video.subarray(0, 30_000))).message).toMatch(/^"cut.mp4" is not an MP4 video: the "mdat" box .* truncated/);
  });

  test('an MP4 without its movie header fails', async () => {
    const video = mp4Video({ frames: 5 });
    // ftyp then mdat, the moov (last box) left out.
    const view = new DataView(video.buffer, video.byteOffset);
    const ftyp = view.getUint32(0);
    const mdat = view.getUint32(ftyp);
    expect((await fails('nomoov.mp4', video.subarray(0, ftyp + mdat))).message).toBe('"nomoov.mp4" is not an MP4 video: it has media data but no "moov" box (the movie header): the recording was not finished');
  });

  test('text named .mp4 fails', async () => {
    expect((await fails('notes.mp4', new TextEncoder().encode('this is not a video, only some words'))).code).toBe('invalid_format');
  });
});

describe('WebM and Matroska', () => {
  test('a WebM file (VP9 and Opus) shows codec, resolution, frames, duration and every stream', async () => {
    const { inspection } = await passes('episode_000000.webm', matroskaVideo({ width: 640, height: 360, fps: 30, frames: 60, audioPackets: 60 }));
    expect(inspection).toEqual({
      format: 'webm',
      doctype: 'webm',
      duration_s: expect.closeTo(1.967, 2),
      frames_counted: true,
      muxing_app: expect.stringContaining('webm-muxer'),
      writing_app: expect.stringContaining('webm-muxer'),
      codec: 'V_VP9',
      width: 640,
      height: 360,
      frames: 60,
      streams: [
        { id: 1, type: 'video', codec: 'V_VP9', width: 640, height: 360, frames: 60, fps: 30 },
        { id: 2, type: 'audio', codec: 'A_OPUS', frames: 60, sample_rate: 48000, channels: 2 },
      ],
    });
  });

  test('a Matroska file (H.264) is read as matroska', async () => {
    const { inspection } = await passes('wrist.mkv', matroskaVideo({ type: 'matroska', frames: 45 }));
    expect(inspection).toMatchObject({ format: 'matroska', doctype: 'matroska', codec: 'V_MPEG4/ISO/AVC', width: 320, height: 240, frames: 45 });
  });

  test('a live recording (Segment and Clusters of unknown size) still counts its frames', async () => {
    const { inspection } = await passes('stream.webm', matroskaVideo({ streaming: true, frames: 70 }));
    expect(inspection).toMatchObject({ format: 'webm', duration_s: null, frames_counted: true, frames: 70 });
  });

  test('above the read limit the Clusters are stepped over: the streams are shown, frames are not counted', async () => {
    const video = matroskaVideo({ frames: 300, frameBytes: 4096 });
    const limits = { ...DEFAULT_LIMITS, maxReadBytes: 256 * 1024 };
    expect(video.length).toBeGreaterThan(1024 ** 2);
    const { inspection, read } = await passes('long.webm', video, limits);
    expect(inspection).toMatchObject({ frames_counted: false, frames: null, codec: 'V_VP9', width: 320, duration_s: expect.closeTo(9.967, 2) });
    expect(read).toBeLessThan(64 * 1024);
  });

  test('an MP4 named .webm fails, naming the file', async () => {
    expect(await fails('clip.webm', mp4Video())).toEqual({ code: 'invalid_format', message: '"clip.webm" is not a WebM video: it does not start with the EBML magic (1A 45 DF A3)' });
  });

  test('a truncated WebM fails', async () => {
    const video = matroskaVideo({ frames: 30, frameBytes: 512 });
    expect((await fails('cut.webm', video.subarray(0, video.length - 700))).message).toMatch(/^"cut.webm" is not a WebM video: .*truncated/);
  });

  test('text named .mkv fails', async () => {
    expect((await fails('notes.mkv', new TextEncoder().encode('not a matroska file'))).message).toBe('"notes.mkv" is not a Matroska video: it does not start with the EBML magic (1A 45 DF A3)');
  });
});
