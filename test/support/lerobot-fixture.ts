import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * An ISO BMFF (MP4) file written box by box to ISO/IEC 14496-12: ftyp, then moov holding a
 * version-0 mvhd (timescale 1000, `durationMs`), then an empty mdat. A valid container
 * without tracks: enough to carry an .mp4 through upload, listing and download byte for byte.
 */
export function minimalMp4(durationMs: number): Buffer {
  const box = (type: string, ...payload: Buffer[]) => {
    const body = Buffer.concat(payload);
    const header = Buffer.alloc(8);
    header.writeUInt32BE(8 + body.length, 0);
    header.write(type, 4, 'ascii');
    return Buffer.concat([header, body]);
  };
  const ftyp = box('ftyp', Buffer.from('isom'), u32(0x200), Buffer.from('isomiso2mp41'));
  const mvhd = Buffer.alloc(100);
  // version 0, flags 0, creation and modification time 0
  mvhd.writeUInt32BE(1000, 12); // timescale
  mvhd.writeUInt32BE(durationMs, 16); // duration
  mvhd.writeUInt32BE(0x00010000, 20); // rate 1.0
  mvhd.writeUInt16BE(0x0100, 24); // volume 1.0
  // unity matrix at 36
  [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].forEach((v, i) => mvhd.writeUInt32BE(v, 36 + i * 4));
  mvhd.writeUInt32BE(1, 96); // next_track_ID
  return Buffer.concat([ftyp, box('moov', box('mvhd', mvhd)), box('mdat')]);
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
};

/**
 * A small dataset in LeRobot's v2 layout under dir: meta/info.json, one Parquet file per
 * episode (written by hyparquet-writer, in a child process since it is an ES module) and
 * one video per episode and camera.
 */
export function writeLeRobotDataset(dir: string, episodes = 2, framesPerEpisode = 5): string[] {
  const info = {
    codebase_version: 'v2.1',
    robot_type: 'so100',
    total_episodes: episodes,
    total_frames: episodes * framesPerEpisode,
    total_tasks: 1,
    chunks_size: 1000,
    fps: 30,
    splits: { train: `0:${episodes}` },
    data_path: 'data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet',
    video_path: 'videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4',
    features: {
      action: { dtype: 'float32', shape: [2], names: ['x', 'y'] },
      'observation.state': { dtype: 'float32', shape: [2], names: ['x', 'y'] },
      'observation.images.front': { dtype: 'video', shape: [48, 64, 3], names: ['height', 'width', 'channel'] },
      timestamp: { dtype: 'float32', shape: [1], names: null },
      frame_index: { dtype: 'int64', shape: [1], names: null },
      episode_index: { dtype: 'int64', shape: [1], names: null },
    },
  };
  fs.mkdirSync(path.join(dir, 'meta'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'meta', 'info.json'), JSON.stringify(info, null, 2));
  const names = ['meta/info.json'];
  const parquetFiles: { filename: string; episode: number }[] = [];
  for (let episode = 0; episode < episodes; episode++) {
    const id = String(episode).padStart(6, '0');
    const data = `data/chunk-000/episode_${id}.parquet`;
    const video = `videos/chunk-000/observation.images.front/episode_${id}.mp4`;
    fs.mkdirSync(path.dirname(path.join(dir, data)), { recursive: true });
    fs.mkdirSync(path.dirname(path.join(dir, video)), { recursive: true });
    parquetFiles.push({ filename: path.join(dir, data), episode });
    fs.writeFileSync(path.join(dir, video), minimalMp4(Math.round((framesPerEpisode / 30) * 1000)));
    names.push(data, video);
  }
  const script = `
    import { parquetWriteFile } from 'hyparquet-writer';
    const files = ${JSON.stringify(parquetFiles)};
    const frames = ${framesPerEpisode};
    for (const { filename, episode } of files) {
      const index = Array.from({ length: frames }, (_, i) => i);
      parquetWriteFile({
        filename,
        columnData: [
          { name: 'timestamp', data: index.map((i) => i / 30), type: 'FLOAT' },
          { name: 'frame_index', data: index.map((i) => BigInt(i)), type: 'INT64' },
          { name: 'episode_index', data: index.map(() => BigInt(episode)), type: 'INT64' },
          { name: 'action_x', data: index.map((i) => Math.sin(i + episode)), type: 'FLOAT' },
        ],
      });
    }`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: path.resolve(__dirname, '../..') });
  return names.sort();
}
