import * as fs from 'node:fs';
import * as path from 'node:path';
import { CliError } from './admin-client';
import type { ApiBody, ApiClient, ApiResult } from './api-client';
import type { CliCommand } from './command-spec';
import { Grant, Limiter, progressBar, sendFile, statFile, Transfer } from './uploader';

type PublishModelBody = ApiBody<'/v1/models', 'post'>;
/** The file fields of a model publish, as an upload fills them in. */
type UploadResult = Required<Pick<PublishModelBody, 'storage_path' | 'file_name' | 'file_size' | 'file_extension'>>;

/** --parallel: how many PUTs (whole files or parts) at once, 1 to 32; 4 when not given. */
function parallelOf(o: Record<string, any>): number {
  const parallel = o.parallel === undefined ? 4 : Number(o.parallel);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 32) throw new CliError(`--parallel must be a whole number from 1 to 32, got "${o.parallel}"`, 'usage', 2);
  return parallel;
}

/** One progress bar over `total` bytes, notes on stderr unless --json, PUTs `parallel` at a time. */
function transfer(client: ApiClient, total: number, parallel: number, quiet: boolean): Transfer {
  const bar = progressBar(total, quiet);
  let sent = 0;
  return {
    client,
    limiter: new Limiter(parallel),
    onBytes: (bytes) => bar((sent += bytes)),
    log: (line) => quiet || process.stderr.write(`${line}\n`),
  };
}

/**
 * Mint a grant, PUT the bytes to it (in parts above the multipart threshold, resuming an
 * earlier run's parts), then confirm with the API that they landed whole.
 */
async function uploadFile(client: ApiClient, file: string, parallel: number, quiet: boolean): Promise<UploadResult> {
  const local = statFile(file);
  const mint = () => client.request<Grant>('POST', '/v1/uploads', { file_name: path.basename(file), file_size: local.size });
  const grant = await sendFile(transfer(client, local.size, parallel, quiet), local, 'upload', mint);
  const landed = await client.call('put', '/v1/uploads', { storage_path: grant.storage_path });
  if (!landed.exists || landed.size !== local.size) {
    throw new CliError(`the upload did not land whole (${landed.size} of ${local.size} bytes stored); run the command again`, 'upload_incomplete');
  }
  return { storage_path: grant.storage_path, file_name: grant.file_name!, file_size: local.size, file_extension: grant.file_extension! };
}

function readJsonObject(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError(`cannot read ${file} as JSON: ${(error as Error).message}`, 'usage', 2);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`${file} must hold a JSON object`, 'usage', 2);
  return parsed as Record<string, unknown>;
}

type ShardList = ApiResult<'/v1/datasets/{idOrSlug}/shards', 'get'>;

/**
 * Every file of a directory as a shard of a dataset draft, `parallel` at a time. A shard
 * that already landed whole (same name and size) is skipped, and a large one sent in parts
 * resumes with its missing parts, so running it again after an interruption uploads only
 * what is missing.
 */
async function uploadDirectory(client: ApiClient, dir: string, dataset: string, parallel: number, quiet: boolean) {
  let names: string[];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort();
  } catch {
    throw new CliError(`cannot read the directory ${dir}`, 'usage', 2);
  }
  if (!names.length) throw new CliError(`${dir} holds no files to upload`, 'usage', 2);
  const shards = `/v1/datasets/${encodeURIComponent(dataset)}/shards`;
  const landed = new Map((await client.request<ShardList>('GET', shards)).items.map((s) => [s.name, s.size]));
  const files = names.map((name) => ({ name, local: statFile(path.join(dir, name)) }));
  const todo = files.filter((f) => landed.get(f.name) !== f.local.size);
  const t = transfer(client, todo.reduce((sum, f) => sum + f.local.size, 0), parallel, quiet);
  const queue = [...todo];
  // Shards `parallel` at a time, and the limiter keeps their PUTs (whole shards or parts) at that many in all.
  const worker = async () => {
    for (let shard = queue.shift(); shard; shard = queue.shift()) {
      const { name, local } = shard;
      await sendFile(t, local, `shard ${dataset}/${name}`, () => client.request<Grant>('POST', shards, { name, size: local.size }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, todo.length) }, worker));
  const after = await client.request<ShardList>('GET', shards);
  const missing = files.filter((f) => !after.items.some((s) => s.name === f.name && s.size === f.local.size));
  if (missing.length) throw new CliError(`${missing.length} shard(s) did not land whole (${missing.map((f) => f.name).join(', ')}); run the command again`, 'upload_incomplete');
  return { dataset, uploaded: todo.map((f) => f.name), skipped: files.length - todo.length, count: after.count, total_bytes: after.total_bytes };
}

export const CATALOG_COMMANDS: Record<string, CliCommand> = {
  'datasets upload': {
    usage: 'datasets upload DIR --dataset ID_OR_SLUG [--parallel N]   (every file of DIR as a shard, large ones in parts; run it again to resume: shards and parts already landed are skipped)',
    examples: ['SVC_API_KEY=svc_test_... svc datasets upload ./episodes --dataset bin-picking --parallel 8'],
    client: 'api',
    options: {
      dataset: { type: 'string', required: true, description: 'The dataset draft the shards go to, by id or slug.' },
      parallel: { type: 'string', description: 'How many uploads (whole files or parts) run at once, 1 to 32; 4 when not given.' },
    },
    positionals: ['DIR'],
    run: (client, o, [dir]) => uploadDirectory(client, dir, o.dataset, parallelOf(o), Boolean(o.json)),
    print: (r) => `${r.dataset}: uploaded ${r.uploaded.length} shard(s), ${r.skipped} already there; ${r.count} shards, ${r.total_bytes} bytes in all`,
  },
  upload: {
    usage: 'upload FILE [--parallel N]   (a large file goes in parts, N at a time; run it again after an interruption to resume)',
    examples: ['SVC_API_KEY=svc_test_... svc upload ./policy.onnx', 'SVC_API_KEY=svc_test_... svc upload ./big-policy.safetensors --parallel 8'],
    client: 'api',
    options: { parallel: { type: 'string', description: 'How many parts of a large file are sent at once, 1 to 32; 4 when not given.' } },
    positionals: ['FILE'],
    run: (client, o, [file]) => uploadFile(client, file, parallelOf(o), Boolean(o.json)),
    // Every field the publish body needs, each on its own line, so the hint below is true as printed.
    print: (r: UploadResult) =>
      [
        `uploaded ${r.file_name} (${r.file_size} bytes)`,
        `storage_path: ${r.storage_path}`,
        `file_name: ${r.file_name}`,
        `file_size: ${r.file_size}`,
        `file_extension: ${r.file_extension}`,
        'publish it with "svc models publish BODY.json" giving storage_path, file_name, file_size and file_extension as above',
      ].join('\n'),
  },
  'models publish': {
    usage: 'models publish BODY.json [--file FILE [--parallel N]]   (--file uploads FILE first, as svc upload does, and fills in the file fields)',
    examples: ['SVC_API_KEY=svc_test_... svc models publish ./model.json --file ./policy.onnx'],
    client: 'api',
    options: {
      file: { type: 'string', description: 'The model file to upload first; its storage_path, file_name, file_size and file_extension fill the body.' },
      parallel: { type: 'string', description: 'With --file: how many parts of a large file are sent at once, 1 to 32; 4 when not given.' },
    },
    positionals: ['BODY.json'],
    run: async (client, o, [bodyFile]) => {
      // The file's fields are the caller's to get right; the API validates them (400 names the field).
      const body = readJsonObject(bodyFile) as PublishModelBody;
      if (o.file) Object.assign(body, await uploadFile(client, o.file, parallelOf(o), Boolean(o.json)));
      return client.call('post', '/v1/models', body);
    },
    print: (r) => `published ${r.slug} (${r.id}): ${r.title}, ${r.price.amount ? `${r.price.amount} ${r.price.currency} cents` : 'free'}`,
  },
};
