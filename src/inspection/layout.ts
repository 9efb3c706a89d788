import type { Inspection } from './inspection';

/**
 * The layout a dataset's files follow (issue 41, docs/catalog.md), found from their names and
 * inspections: `lerobot` (meta/info.json), `rlds` (a TFDS dataset_info.json or features.json
 * with TFRecord shards), `robomimic` (an HDF5 file with data/demo_* groups), `rosbag` (.bag,
 * .mcap, .db3 recordings), else `files`. Pure: the dataset's inspection carries it.
 */
export interface LayoutFile {
  name: string;
  inspection?: Inspection | null;
}

type Json = Record<string, unknown>;

export function datasetLayout(files: LayoutFile[]): Json {
  const info = files.find((f) => /(^|\/)meta\/info\.json$/.test(f.name) && f.inspection?.lerobot);
  if (info) {
    const meta = info.inspection!.lerobot as Json;
    const episodes = files.filter((f) => /\.parquet$/.test(f.name) && /(^|\/)data\//.test(f.name)).length;
    return {
      kind: 'lerobot',
      robot_type: meta.robot_type,
      fps: meta.fps,
      episodes: meta.total_episodes,
      episode_files: episodes,
      frames: meta.total_frames,
      features: meta.features,
    };
  }
  const tfds = files.find((f) => f.inspection?.tfds || f.inspection?.tfds_features);
  if (tfds) {
    const meta = tfds.inspection!.tfds as Json | undefined;
    const splits = (meta?.splits as { name: string; episodes: number | null }[] | undefined) ?? [];
    return {
      kind: 'rlds',
      name: meta?.name ?? null,
      splits,
      episodes: splits.length ? splits.reduce((n, s) => n + (s.episodes ?? 0), 0) : null,
      tfrecord_files: files.filter((f) => /\.tfrecord(-\d+-of-\d+)?$/.test(f.name)).length,
    };
  }
  for (const f of files) {
    if (f.inspection?.format !== 'hdf5') continue;
    const tree = (f.inspection.tree as { path: string; type: string; shape?: number[]; dtype?: string }[]) ?? [];
    const demos = tree.filter((e) => e.type === 'group' && /^\/data\/demo_\d+$/.test(e.path));
    if (!demos.length) continue;
    const first = demos[0].path;
    const shapes = (prefix: string) => Object.fromEntries(tree.filter((e) => e.type === 'dataset' && e.path.startsWith(prefix)).map((e) => [e.path.slice(prefix.length), { shape: e.shape, dtype: e.dtype }]));
    return {
      kind: 'robomimic',
      file: f.name,
      demos: demos.length,
      actions: shapes(`${first}/`)['actions'] ?? null,
      observations: shapes(`${first}/obs/`),
    };
  }
  const recordings = files.filter((f) => ['rosbag', 'mcap', 'ros2_db3'].includes(String(f.inspection?.format)));
  if (recordings.length) {
    const topics = new Map<string, number | null>();
    let duration = 0;
    for (const r of recordings) {
      duration += Number(r.inspection!.duration_s ?? 0);
      for (const t of (r.inspection!.topics as { topic: string; messages: number | null }[] | undefined) ?? []) topics.set(t.topic, (topics.get(t.topic) ?? 0) + (t.messages ?? 0));
    }
    return { kind: 'rosbag', recordings: recordings.length, duration_s: duration, topics: [...topics].slice(0, 1000).map(([topic, messages]) => ({ topic, messages })) };
  }
  return { kind: 'files' };
}

/**
 * The episode files a LeRobot meta/info.json claims that are not among the files (its
 * data_path template for each episode 0..total_episodes-1, chunked by chunks_size); at most `cap` named.
 */
export function missingLeRobotEpisodes(files: LayoutFile[], cap = 10): { claimed: number; missing: string[] } | null {
  const info = files.find((f) => /(^|\/)meta\/info\.json$/.test(f.name) && f.inspection?.lerobot);
  if (!info) return null;
  const meta = info.inspection!.lerobot as Json;
  const total = typeof meta.total_episodes === 'number' ? meta.total_episodes : 0;
  const template = typeof meta.data_path === 'string' ? meta.data_path : 'data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet';
  const chunk = typeof meta.chunks_size === 'number' && meta.chunks_size > 0 ? meta.chunks_size : 1000;
  const root = info.name.slice(0, info.name.length - 'meta/info.json'.length);
  const names = new Set(files.map((f) => f.name));
  const missing: string[] = [];
  let count = 0;
  for (let episode = 0; episode < Math.min(total, 1_000_000); episode++) {
    const name = root + template.replace(/\{(\w+)(?::0?(\d+)d)?\}/g, (_, key: string, width?: string) => {
      const value = key === 'episode_chunk' ? Math.floor(episode / chunk) : key === 'episode_index' ? episode : NaN;
      return Number.isNaN(value) ? `{${key}}` : String(value).padStart(Number(width ?? 0), '0');
    });
    if (!names.has(name)) {
      count++;
      if (missing.length < cap) missing.push(name);
    }
  }
  return count ? { claimed: total, missing: count > cap ? [...missing, `and ${count - cap} more`] : missing } : null;
}
