/**
 * Whole datasets and model files (issue 41): `svc datasets create`, `svc datasets upload DIR`
 * (recursive, relative paths as shard names), `svc datasets download SLUG [DIR]` and
 * `svc download MODEL [FILE]`, each verifying sha256 and resumable by running it again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CliError } from './admin-client';
import type { ApiClient, ApiResult } from './api-client';
import type { CliCommand } from './command-spec';
import { sha256Of } from '../../clients/typescript/src/downloads';
import { Grant, LocalFile, localFile, parallelOf, progress, readJsonObject, sendFile, uploaderOf } from './transfer-options';

type ShardList = ApiResult<'/v1/datasets/{idOrSlug}/shards', 'get'>;
type Shard = ShardList['items'][number];

/** Runs work on every item, `parallel` at a time; the first failure rejects once the running ones settle. */
async function eachInParallel<T>(items: T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  let failure: unknown;
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined && failure === undefined; next = queue.shift()) {
      try {
        await work(next);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  if (failure !== undefined) throw failure;
}

/**
 * Every file under dir, its path relative to dir with "/" as the shard name, in name order.
 * Names starting with "." (.git, .DS_Store, .cache) are left out, as huggingface_hub's
 * upload_folder leaves out .git; so are symbolic links, which could point outside dir.
 */
function filesUnder(dir: string): { name: string; local: LocalFile }[] {
  const found: { name: string; local: LocalFile }[] = [];
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) found.push({ name: child, local: localFile(path.join(dir, child)) });
    }
  };
  try {
    if (!fs.statSync(dir).isDirectory()) throw new Error('not a directory');
    walk('');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read the directory ${dir}`, 'usage', 2);
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const shardsOf = (dataset: string) => `/v1/datasets/${encodeURIComponent(dataset)}/shards`;
/** A shard's route with its folders as path segments, each encoded. */
const shardRoute = (dataset: string, name: string) => `${shardsOf(dataset)}/${name.split('/').map(encodeURIComponent).join('/')}`;

/**
 * Every file under dir as a shard of a dataset draft, named by its relative path, `parallel`
 * at a time. A file whose shard already landed with the same size and sha256 is skipped, and
 * a large one sent in parts resumes with its missing parts, so running it again after an
 * interruption uploads only what is missing. Single-PUT shards are minted with their sha256,
 * so storage refuses any other bytes; every shard's listed sha256 is checked at the end.
 */
export async function uploadDirectory(client: ApiClient, dir: string, dataset: string, parallel: number, quiet: boolean) {
  const files = filesUnder(dir);
  if (!files.length) throw new CliError(`${dir} holds no files to upload`, 'usage', 2);
  const shards = shardsOf(dataset);
  const landed = new Map((await client.request<ShardList>('GET', shards)).items.map((s) => [s.name, s]));
  const hashes = new Map<string, string>();
  await eachInParallel(files, parallel, async (f) => void hashes.set(f.name, await sha256Of(f.local.path)));
  const isLanded = (f: (typeof files)[number], shard: Shard | undefined) => shard?.size === f.local.size && shard.sha256 === hashes.get(f.name);
  const todo = files.filter((f) => !isLanded(f, landed.get(f.name)));
  const uploader = uploaderOf(client, todo.reduce((sum, f) => sum + f.local.size, 0), parallel, quiet);
  // Shards `parallel` at a time, and the uploader's limiter keeps their PUTs (whole shards or parts) at that many in all.
  await eachInParallel(todo, parallel, async ({ name, local }) => {
    const mint = async () => {
      try {
        return await client.request<Grant>('POST', shards, { name, size: local.size, sha256: hashes.get(name) });
      } catch (error) {
        const e = error as CliError;
        throw new CliError(`${name}: ${e.message}`, e.code, e.exitCode);
      }
    };
    await sendFile(uploader, local.path, `shard ${dataset}/${name}`, mint);
  });
  const after = await client.request<ShardList>('GET', shards);
  const listed = new Map(after.items.map((s) => [s.name, s]));
  // A large shard's sha256 may still be computing (null): then its size is what can be checked.
  const missing = files.filter((f) => {
    const shard = listed.get(f.name);
    return shard?.size !== f.local.size || (shard.sha256 !== null && shard.sha256 !== hashes.get(f.name));
  });
  if (missing.length) throw new CliError(`${missing.length} shard(s) did not land whole (${missing.map((f) => f.name).join(', ')}); run the command again`, 'upload_incomplete');
  return { dataset, uploaded: todo.map((f) => f.name), skipped: files.length - todo.length, count: after.count, total_bytes: after.total_bytes };
}

const DOWNLOAD_ATTEMPTS = 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Fetches a file to `target` through `target.part`: a part left by an interrupted run is
 * continued with a Range request (or started over when the server sends the whole file),
 * and the file appears at `target` only once its size and sha256 are the expected ones.
 * `sign` is asked for a fresh URL on each attempt (signed URLs live 120 s); the sha256 it
 * names is checked when the list had none yet (a large draft shard still being hashed).
 */
async function downloadFile(
  target: string, listed: { size: number; sha256: string | null }, sign: () => Promise<{ url: string; sha256: string | null }>, onBytes: (bytes: number) => void,
): Promise<void> {
  const expected = { ...listed };
  const part = `${target}.part`;
  for (let attempt = 1; ; attempt++) {
    let have = fs.existsSync(part) ? fs.statSync(part).size : 0;
    if (have > expected.size) {
      // Longer than the file: not a prefix of it.
      fs.rmSync(part);
      have = 0;
    }
    try {
      if (have < expected.size || expected.size === 0) {
        const signed = await sign();
        expected.sha256 ??= signed.sha256;
        const response = await fetch(signed.url, { headers: have ? { range: `bytes=${have}-` } : {} });
        if (response.status !== 200 && response.status !== 206) throw new CliError(`storage answered HTTP ${response.status}`, `storage_${response.status}`);
        // A server that ignores Range sends the whole file: written afresh.
        const append = response.status === 206;
        if (!append) have = 0;
        onBytes(have);
        // Made once the API agreed to serve it: a refused download leaves no folders behind.
        fs.mkdirSync(path.dirname(target), { recursive: true });
        const counter = async function* (source: AsyncIterable<Uint8Array>) {
          for await (const chunk of source) {
            onBytes(chunk.length);
            yield chunk;
          }
        };
        await pipeline(Readable.fromWeb(response.body as any), counter, fs.createWriteStream(part, { flags: append ? 'a' : 'w' }));
      }
      const size = fs.statSync(part).size;
      if (size !== expected.size) throw new CliError(`got ${size} bytes, not the ${expected.size} listed`, 'download_incomplete');
      if (expected.sha256) {
        const actual = await sha256Of(part);
        if (actual !== expected.sha256) {
          fs.rmSync(part, { force: true });
          throw new CliError(`${target}: the bytes have sha256 ${actual}, not the listed ${expected.sha256}; the download was removed`, 'checksum_mismatch');
        }
      }
      fs.renameSync(part, target);
      return;
    } catch (error) {
      const e = error as CliError;
      // A checksum mismatch or a refusal by the API (402, 404) would only repeat.
      const final = e.code === 'checksum_mismatch' || (error instanceof CliError && !e.code.startsWith('storage_5') && e.code !== 'download_incomplete' && e.code !== 'unreachable');
      if (final || attempt >= DOWNLOAD_ATTEMPTS) throw error instanceof CliError ? error : new CliError(`${target}: ${e.message}; run the command again to resume`, 'download_incomplete');
      await sleep(500 * 2 ** (attempt - 1));
    }
  }
}

/** True when target already holds the expected bytes (a run again after an interruption skips it). */
async function alreadyThere(target: string, expected: { size: number; sha256: string | null }): Promise<boolean> {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  if (!stat?.isFile() || stat.size !== expected.size) return false;
  return expected.sha256 === null || (await sha256Of(target)) === expected.sha256;
}

/** The local path of a shard under dir; a name the API would never give (climbing out) is refused. */
function targetOf(dir: string, name: string): string {
  const target = path.resolve(dir, ...name.split('/'));
  if (!target.startsWith(path.resolve(dir) + path.sep)) throw new CliError(`refusing the shard name ${JSON.stringify(name)}: it leads outside ${dir}`, 'bad_response');
  return target;
}

/** Every shard of a dataset into dir (its folders recreated), `parallel` at a time, each verified. */
export async function downloadDataset(client: ApiClient, dataset: string, dir: string | undefined, parallel: number, quiet: boolean) {
  const list = await client.request<ShardList>('GET', shardsOf(dataset));
  const into = dir ?? dataset;
  const onBytes = progress(list.total_bytes, quiet);
  const downloaded: string[] = [];
  let skipped = 0;
  await eachInParallel(list.items, parallel, async (shard) => {
    const target = targetOf(into, shard.name);
    if (await alreadyThere(target, shard)) {
      skipped++;
      onBytes(shard.size);
      return;
    }
    const sign = () => client.request<ApiResult<'/v1/datasets/{idOrSlug}/shards/{path}', 'get'>>('GET', shardRoute(dataset, shard.name));
    await downloadFile(target, shard, sign, onBytes);
    downloaded.push(shard.name);
  });
  return { dataset, dir: into, downloaded: downloaded.sort(), skipped, count: list.count, total_bytes: list.total_bytes };
}

/** A model's file, verified against the sha256 its download names. */
export async function downloadModel(client: ApiClient, model: string, file: string | undefined, quiet: boolean) {
  type Download = ApiResult<'/v1/models/{idOrSlug}/download', 'post'>;
  const route = `/v1/models/${encodeURIComponent(model)}/download`;
  const first = await client.request<Download>('POST', route);
  const target = file ?? first.file_name;
  const expected = { size: first.file_size, sha256: first.file_sha256 ?? null };
  if (await alreadyThere(target, expected)) return { model, file: target, size: expected.size, sha256: expected.sha256, skipped: true };
  const onBytes = progress(expected.size, quiet);
  let unused: Download | undefined = first;
  const sign = async () => {
    const next = unused ?? (await client.request<Download>('POST', route));
    unused = undefined;
    return { url: next.url, sha256: next.file_sha256 ?? null };
  };
  await downloadFile(path.resolve(target), expected, sign, onBytes);
  return { model, file: target, size: expected.size, sha256: expected.sha256, skipped: false };
}

export const DATASET_COMMANDS: Record<string, CliCommand> = {
  'datasets create': {
    usage: 'datasets create [BODY.json] [--title T] [--description D] [--price-cents N] [--type dataset|telemetry|calibration] [--license L]   (a draft to upload shards to; flags override the file)',
    examples: ['SVC_API_KEY=svc_test_... svc datasets create --title "Bin Picking" --price-cents 4900', 'SVC_API_KEY=svc_test_... svc datasets create ./dataset.json'],
    client: 'api',
    optionalPositionals: ['BODY.json'],
    options: {
      title: { type: 'string', description: "The dataset's title (its slug is made from it); required here or in BODY.json." },
      description: { type: 'string', description: 'What the dataset holds, shown to buyers.' },
      'price-cents': { type: 'string', description: 'The price in cents, a whole number (0 for free).' },
      type: { type: 'string', description: 'The kind of dataset: dataset, telemetry or calibration.' },
      license: { type: 'string', description: 'The license buyers get, e.g. MIT or proprietary.' },
    },
    run: (client, o, [bodyFile]) => {
      const body: Record<string, unknown> = bodyFile ? readJsonObject(bodyFile) : {};
      for (const field of ['title', 'description', 'type', 'license'] as const) if (o[field] !== undefined) body[field] = o[field];
      if (o['price-cents'] !== undefined) {
        const cents = Number(o['price-cents']);
        if (!Number.isInteger(cents) || cents < 0) throw new CliError(`--price-cents must be a whole number of cents, got "${o['price-cents']}"`, 'usage', 2);
        body.price_cents = cents;
      }
      if (body.title === undefined) throw new CliError('give the dataset a title: --title T, or "title" in BODY.json', 'usage', 2);
      return client.request('POST', '/v1/datasets', body);
    },
    print: (r) => `created dataset ${r.slug} (${r.id}): ${r.title}, a draft; upload with "svc datasets upload DIR --dataset ${r.slug}", then publish it`,
  },
  'datasets upload': {
    usage: 'datasets upload DIR --dataset ID_OR_SLUG [--parallel N]   (every file under DIR as a shard named by its relative path, large ones in parts; run it again to resume: shards landed with the same sha256 are skipped)',
    examples: ['SVC_API_KEY=svc_test_... svc datasets upload ./lerobot --dataset bin-picking --parallel 8'],
    client: 'api',
    options: {
      dataset: { type: 'string', required: true, description: 'The dataset draft the files go to, by id or slug.' },
      parallel: { type: 'string', description: 'How many uploads (whole files or parts) run at once, 1 to 32; 4 when not given.' },
    },
    positionals: ['DIR'],
    run: (client, o, [dir]) => uploadDirectory(client, dir, o.dataset, parallelOf(o), Boolean(o.json)),
    print: (r) => `${r.dataset}: uploaded ${r.uploaded.length} shard(s), ${r.skipped} already there; ${r.count} shards, ${r.total_bytes} bytes in all`,
  },
  'datasets download': {
    usage: 'datasets download ID_OR_SLUG [DIR] [--parallel N]   (every shard into DIR, default ./ID_OR_SLUG, folders kept, each checked against its sha256; run it again to resume)',
    examples: ['SVC_API_KEY=svc_test_... svc datasets download bin-picking ./bin-picking'],
    client: 'api',
    options: { parallel: { type: 'string', description: 'How many shards download at once, 1 to 32; 4 when not given.' } },
    positionals: ['ID_OR_SLUG'],
    optionalPositionals: ['DIR'],
    run: (client, o, [dataset, dir]) => downloadDataset(client, dataset, dir, parallelOf(o), Boolean(o.json)),
    print: (r) => `${r.dataset}: downloaded ${r.downloaded.length} shard(s), ${r.skipped} already there, into ${r.dir}; ${r.count} shards, ${r.total_bytes} bytes, sha256 checked`,
  },
  download: {
    usage: 'download MODEL [FILE]   (the model file, default its own name here, checked against its sha256; run it again to resume)',
    examples: ['SVC_API_KEY=svc_test_... svc download grasp-policy ./policy.onnx'],
    client: 'api',
    options: {},
    positionals: ['MODEL'],
    optionalPositionals: ['FILE'],
    run: (client, o, [model, file]) => downloadModel(client, model, file, Boolean(o.json)),
    print: (r) => (r.skipped ? `${r.file} already holds ${r.model} (${r.size} bytes, sha256 checked)` : `downloaded ${r.model} to ${r.file} (${r.size} bytes${r.sha256 ? ', sha256 checked' : ''})`),
  },
};
