import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CliError } from './admin-client';
import type { ApiBody, ApiClient, ApiResult } from './api-client';
import type { CliCommand } from './command-spec';

type PublishModelBody = ApiBody<'/v1/models', 'post'>;
/** The file fields of a model publish, as an upload fills them in. */
type UploadResult = Required<Pick<PublishModelBody, 'storage_path' | 'file_name' | 'file_size' | 'file_extension'>>;

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** A one-line bar with bytes, rate and time left on stderr when it is a terminal; nothing for scripts or --json. */
function progressBar(total: number, quiet: boolean): (sent: number) => void {
  if (quiet || !process.stderr.isTTY) return () => undefined;
  const started = Date.now();
  let last = -1;
  return (sent) => {
    const percent = total ? Math.floor((sent / total) * 100) : 100;
    if (percent === last) return;
    last = percent;
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = sent / seconds;
    const eta = rate > 0 ? Math.ceil((total - sent) / rate) : 0;
    const filled = Math.round(percent / 4);
    process.stderr.write(`\r[${'#'.repeat(filled)}${' '.repeat(25 - filled)}] ${String(percent).padStart(3)}%  ${mib(sent)}/${mib(total)}  ${mib(rate)}/s  ${eta}s left `);
    if (sent >= total) process.stderr.write('\n');
  };
}

/** Streams a file to a signed storage URL with its exact length (S3 signs content-length). */
async function putFile(url: string, file: string, size: number, progress: (sent: number) => void): Promise<void> {
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : http;
  let sent = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sent += chunk.length;
      progress(sent);
      callback(null, chunk);
    },
  });
  const request = transport.request(target, { method: 'PUT', headers: { 'content-length': size, 'content-type': 'application/octet-stream' } });
  const answered = new Promise<void>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => {
        if (response.statusCode! < 300) return resolve();
        let code = `storage_${response.statusCode}`;
        let message = body.slice(0, 200);
        try {
          ({ code, message } = JSON.parse(body).error);
        } catch {
          // S3 answers XML; its text is the message.
        }
        reject(new CliError(`storage refused the upload (HTTP ${response.statusCode}): ${message}`, code));
      });
    });
  });
  // The server's answer explains a failure better than the broken pipe it may cause (a 413
  // arrives while bytes are still going out), so it wins when both fail.
  const [sending, answer] = await Promise.allSettled([pipeline(fs.createReadStream(file), counter, request), answered]);
  if (answer.status === 'rejected') throw answer.reason;
  if (sending.status === 'rejected') throw sending.reason;
}

/** Mint a grant, PUT the bytes to it, then confirm with the API that they landed whole. */
async function uploadFile(client: ApiClient, file: string, quiet: boolean): Promise<UploadResult> {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    throw new CliError(`cannot read ${file}`, 'usage', 2);
  }
  const grant = await client.call('post', '/v1/uploads', { file_name: path.basename(file), file_size: size });
  await putFile(grant.upload_url, file, size, progressBar(size, quiet));
  const landed = await client.call('put', '/v1/uploads', { storage_path: grant.storage_path });
  if (!landed.exists || landed.size !== size) {
    throw new CliError(`the upload did not land whole (${landed.size} of ${size} bytes stored); run the command again`, 'upload_incomplete');
  }
  return { storage_path: grant.storage_path, file_name: grant.file_name, file_size: size, file_extension: grant.file_extension };
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
type ShardGrant = ApiResult<'/v1/datasets/{idOrSlug}/shards', 'post'>;

/**
 * Every file of a directory as a shard of a dataset draft, `parallel` at a time. A shard
 * that already landed whole (same name and size) is skipped, so running it again after an
 * interruption uploads only what is missing.
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
  const files = names.map((name) => ({ name, file: path.join(dir, name), size: fs.statSync(path.join(dir, name)).size }));
  const todo = files.filter((f) => landed.get(f.name) !== f.size);
  const progress = progressBar(todo.reduce((sum, f) => sum + f.size, 0), quiet);
  let sent = 0;
  const queue = [...todo];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const shard = next;
      const grant = await client.request<ShardGrant>('POST', shards, { name: shard.name, size: shard.size });
      let mine = 0;
      await putFile(grant.upload_url, shard.file, shard.size, (bytes) => {
        sent += bytes - mine;
        mine = bytes;
        progress(sent);
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, todo.length) }, worker));
  const after = await client.request<ShardList>('GET', shards);
  const missing = files.filter((f) => !after.items.some((s) => s.name === f.name && s.size === f.size));
  if (missing.length) throw new CliError(`${missing.length} shard(s) did not land whole (${missing.map((f) => f.name).join(', ')}); run the command again`, 'upload_incomplete');
  return { dataset, uploaded: todo.map((f) => f.name), skipped: files.length - todo.length, count: after.count, total_bytes: after.total_bytes };
}

export const CATALOG_COMMANDS: Record<string, CliCommand> = {
  'datasets upload': {
    usage: 'datasets upload DIR --dataset ID_OR_SLUG [--parallel N]   (every file of DIR as a shard; resumes: shards already landed are skipped)',
    examples: ['SVC_API_KEY=svc_test_... svc datasets upload ./episodes --dataset bin-picking --parallel 8'],
    client: 'api',
    options: { dataset: { type: 'string', required: true }, parallel: { type: 'string' } },
    positionals: ['DIR'],
    run: (client, o, [dir]) => {
      const parallel = o.parallel === undefined ? 4 : Number(o.parallel);
      if (!Number.isInteger(parallel) || parallel < 1 || parallel > 32) throw new CliError(`--parallel must be a whole number from 1 to 32, got "${o.parallel}"`, 'usage', 2);
      return uploadDirectory(client, dir, o.dataset, parallel, Boolean(o.json));
    },
    print: (r) => `${r.dataset}: uploaded ${r.uploaded.length} shard(s), ${r.skipped} already there; ${r.count} shards, ${r.total_bytes} bytes in all`,
  },
  upload: {
    usage: 'upload FILE',
    examples: ['SVC_API_KEY=svc_test_... svc upload ./policy.onnx'],
    client: 'api',
    options: {},
    positionals: ['FILE'],
    run: (client, o, [file]) => uploadFile(client, file, Boolean(o.json)),
    print: (r: UploadResult) =>
      `uploaded ${r.file_name} (${r.file_size} bytes) to ${r.storage_path}\n` +
      'publish it with "svc models publish BODY.json" giving storage_path, file_name, file_size and file_extension as above',
  },
  'models publish': {
    usage: 'models publish BODY.json [--file FILE]   (--file uploads FILE first and fills in the file fields)',
    examples: ['SVC_API_KEY=svc_test_... svc models publish ./model.json --file ./policy.onnx'],
    client: 'api',
    options: { file: { type: 'string' } },
    positionals: ['BODY.json'],
    run: async (client, o, [bodyFile]) => {
      // The file's fields are the caller's to get right; the API validates them (400 names the field).
      const body = readJsonObject(bodyFile) as PublishModelBody;
      if (o.file) Object.assign(body, await uploadFile(client, o.file, Boolean(o.json)));
      return client.call('post', '/v1/models', body);
    },
    print: (r) => `published ${r.slug} (${r.id}): ${r.title}, ${r.price.amount ? `${r.price.amount} ${r.price.currency} cents` : 'free'}`,
  },
};
