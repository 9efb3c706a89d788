import { expect, Inspection, InspectionError } from '../inspection';
import type { RangedFile } from '../ranged-file';

/**
 * Text formats: UTF-8 and their structure. A file within the read limit is read whole; a
 * larger one is checked on its first limit's worth (up to the last full line).
 */
async function readLines(file: RangedFile): Promise<{ text: string; whole: boolean }> {
  const whole = file.size <= file.limits.maxReadBytes;
  let bytes = await file.readAt(0, Math.min(file.size, file.limits.maxReadBytes));
  if (!whole) bytes = bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1);
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), whole };
  } catch {
    throw new InspectionError('invalid_format', 'it is not UTF-8 text');
  }
}

export async function inspectJson(file: RangedFile): Promise<Inspection> {
  if (file.size > file.limits.maxReadBytes) {
    // Larger than the read limit: checked no further than its start (a JSON object or array opening).
    const first = new TextDecoder().decode(await file.readAt(0, 4096)).trimStart()[0];
    expect(first === '{' || first === '[', 'it does not start with a JSON object or array');
    return { format: 'json', top_level: first === '{' ? 'object' : 'array', complete: false };
  }
  const { text } = await readLines(file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    expect(false, `it is not JSON: ${(error as Error).message}`);
  }
  const top = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  return {
    format: 'json',
    top_level: top,
    ...(Array.isArray(value) ? { items: value.length } : top === 'object' ? { keys: Object.keys(value as object).slice(0, 100) } : {}),
    ...layoutMetadata(file.name, value),
  };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 200) : null);

/**
 * What a dataset layout's metadata file says (issue 41, src/inspection/layout.ts): LeRobot's
 * meta/info.json (robot type, fps, episodes, frames, features, where episodes are), a
 * TFDS/RLDS dataset_info.json (splits with their example counts) or features.json.
 */
function layoutMetadata(name: string, value: unknown): Json {
  const base = name.slice(name.lastIndexOf('/') + 1);
  if (!isObject(value)) return {};
  if (base === 'info.json' && typeof value.codebase_version === 'string' && isObject(value.features)) {
    const features = Object.fromEntries(Object.entries(value.features).slice(0, 100).map(([k, f]) => [k, isObject(f) ? { dtype: str(f.dtype), shape: Array.isArray(f.shape) ? f.shape.slice(0, 8) : null } : null]));
    return {
      lerobot: {
        codebase_version: str(value.codebase_version),
        robot_type: str(value.robot_type),
        fps: num(value.fps),
        total_episodes: num(value.total_episodes),
        total_frames: num(value.total_frames),
        chunks_size: num(value.chunks_size),
        data_path: str(value.data_path),
        features,
      },
    };
  }
  if (base === 'dataset_info.json' && Array.isArray(value.splits)) {
    const splits = value.splits.filter(isObject).slice(0, 100).map((s) => ({
      name: str(s.name),
      episodes: Array.isArray(s.shardLengths) ? s.shardLengths.reduce((n: number, l) => n + (Number(l) || 0), 0) : num(s.numExamples),
    }));
    return { tfds: { name: str(value.name), version: str(value.version), splits } };
  }
  if (base === 'features.json' && isObject(value)) return { tfds_features: true };
  return {};
}

export async function inspectJsonl(file: RangedFile): Promise<Inspection> {
  const { text, whole } = await readLines(file);
  let records = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (i % 10_000 === 0) file.checkTime();
    if (!lines[i].trim()) continue;
    try {
      JSON.parse(lines[i]);
    } catch (error) {
      expect(false, `line ${i + 1} is not JSON: ${(error as Error).message}`);
    }
    records++;
  }
  return { format: 'jsonl', records: whole ? records : null, records_checked: records };
}

export async function inspectCsv(file: RangedFile): Promise<Inspection> {
  const { text, whole } = await readLines(file);
  const lines = text.split(/\r?\n/).filter((l) => l.length);
  expect(lines.length > 0, 'it is empty');
  const columns = lines[0].split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
  return { format: 'csv', columns: columns.slice(0, 1000), rows: whole ? lines.length - 1 : null };
}

export async function inspectYaml(file: RangedFile): Promise<Inspection> {
  const { text } = await readLines(file);
  expect(!text.includes('\0'), 'it holds NUL bytes, so it is not YAML text');
  return { format: 'yaml', lines: text.split('\n').length };
}

/** Wavefront OBJ: text with vertex and face lines. */
export async function inspectObj(file: RangedFile): Promise<Inspection> {
  const { text, whole } = await readLines(file);
  const vertices = (text.match(/^v\s/gm) ?? []).length;
  const faces = (text.match(/^f\s/gm) ?? []).length;
  expect(vertices > 0, 'it has no vertex ("v") lines: not a Wavefront OBJ');
  return { format: 'obj', vertices: whole ? vertices : null, faces: whole ? faces : null };
}
