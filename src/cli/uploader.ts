/**
 * Moving a file's bytes to the signed URLs of an upload grant: one PUT, or (when the grant
 * has `multipart`) its parts several at a time, each retried, with the ETags of the parts
 * done kept in a state file under ~/.cache/svc/uploads so a later run of the same command
 * sends only the parts still missing.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CliError } from './admin-client';
import type { components } from '../generated/api-types';
import type { ApiClient } from './api-client';

/** The `multipart` of a grant (POST /v1/uploads, shard grants) and of POST /v1/uploads/parts. */
export type MultipartView = components['schemas']['MultipartUpload'];

/** What an upload grant says about where the bytes go; the rest of it is the caller's. */
export interface Grant {
  storage_path: string;
  upload_url: string | null;
  /** Headers the single PUT must carry (S3 with a bound sha256). */
  upload_headers?: Record<string, string>;
  multipart?: MultipartView;
  file_name?: string;
  file_extension?: string;
}

/** A file as stat saw it: a resumed upload must be of the same bytes. */
export interface LocalFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/** What one command's uploads share: the client, the cap on PUTs in flight, progress and notes for stderr. */
export interface Transfer {
  client: ApiClient;
  limiter: Limiter;
  onBytes: (bytes: number) => void;
  log: (line: string) => void;
}

const RETRIES = 3;
const BACKOFF_MS = 1000;
/** A part PUT with no byte moving either way for this long is dropped and retried. */
const IDLE_MS = 120_000;
/** The most part URLs one POST /v1/uploads/parts answers. */
const PART_URLS_PER_CALL = 100;
/** Part URLs are signed again this long before they expire, rather than sent and refused. */
const EXPIRY_MARGIN_MS = 5 * 60_000;

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A one-line bar with bytes, rate and time left on stderr when it is a terminal; nothing for scripts or --json. */
export function progressBar(total: number, quiet: boolean): (sent: number) => void {
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

/** At most `slots` calls of run() at once; the others wait their turn. */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(readonly slots: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    while (this.active >= this.slots) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export function statFile(file: string): LocalFile {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) throw new Error('not a file');
    return { path: path.resolve(file), size: stat.size, mtimeMs: stat.mtimeMs };
  } catch {
    throw new CliError(`cannot read ${file}`, 'usage', 2);
  }
}

/** A storage server's refusal, with its HTTP status (the API's errors carry no status). */
class StorageRefused extends CliError {
  constructor(message: string, code: string, readonly status: number) {
    super(message, code);
  }
}

/** The multipart upload is no more (aborted, swept after a week, or completed): only a new grant helps. */
class UploadGone extends CliError {
  constructor() {
    super('the upload in progress was aborted or swept by the service; run the same command again to start over', 'upload_gone');
  }
}

/**
 * Streams `size` bytes of a file from `start` to a signed storage URL with their exact length
 * (S3 signs content-length); resolves to the answer's ETag (parts need it to complete).
 */
export async function putFile(
  url: string, file: string, range: { start: number; size: number }, onBytes: (bytes: number) => void, headers: Record<string, string> = {},
): Promise<string | undefined> {
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : http;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      onBytes(chunk.length);
      callback(null, chunk);
    },
  });
  const request = transport.request(target, { method: 'PUT', headers: { ...headers, 'content-length': range.size, 'content-type': 'application/octet-stream' } });
  request.setTimeout(IDLE_MS, () => request.destroy(new Error(`no progress for ${IDLE_MS / 1000} s`)));
  const answered = new Promise<string | undefined>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('error', reject);
      response.on('end', () => {
        if (response.statusCode! < 300) return resolve(response.headers.etag);
        let code = `storage_${response.statusCode}`;
        let message = body.slice(0, 200);
        try {
          ({ code, message } = JSON.parse(body).error);
        } catch {
          // S3 answers XML; its text is the message.
        }
        reject(new StorageRefused(`storage refused the upload (HTTP ${response.statusCode}): ${message}`, code, response.statusCode!));
      });
    });
  });
  const source = fs.createReadStream(file, range.size ? { start: range.start, end: range.start + range.size - 1 } : { start: range.start });
  // A server refusing before it read the body may also stop reading it without closing (the
  // RADOS Gateway does, for a part of an aborted upload): the sending stops with the refusal.
  answered.catch(() => request.destroy());
  // The server's answer explains a failure better than the broken pipe it may cause (a 413
  // arrives while bytes are still going out), so it wins when both fail.
  const [sending, answer] = await Promise.allSettled([pipeline(source, counter, request), answered]);
  if (answer.status === 'rejected') throw answer.reason;
  if (sending.status === 'rejected') throw sending.reason;
  return answer.value;
}

/** What a multipart upload in progress keeps between runs; never the API key itself. */
interface UploadState {
  version: 1;
  file: string;
  size: number;
  mtime_ms: number;
  api: string;
  key_sha256: string;
  /** What the upload is for: "upload", or "shard DATASET/NAME". */
  target: string;
  storage_path: string;
  upload_id: string;
  file_name: string | null;
  file_extension: string | null;
  part_size: number;
  part_count: number;
  /** The ETag of every part done so far, by part number. */
  etags: Record<string, string>;
}

/** One state file per file, target (an upload, a dataset's shard), API and key, so runs for other targets leave it alone. */
function stateFileOf(file: string, target: string, caller: { api: string; key_sha256: string }): string {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const name = createHash('sha256').update(JSON.stringify([file, target, caller.api, caller.key_sha256])).digest('hex');
  return path.join(cache, 'svc', 'uploads', `${name}.json`);
}

function readState(file: string): UploadState | undefined {
  try {
    const state = JSON.parse(fs.readFileSync(file, 'utf8'));
    return state?.version === 1 && state.etags && typeof state.etags === 'object' ? state : undefined;
  } catch {
    return undefined;
  }
}

/** Written whole or not at all: a run killed mid-write leaves the previous state. */
function writeState(file: string, state: UploadState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(state), { mode: 0o600 });
  fs.renameSync(temp, file);
}

/** The API base URL and a hash of the key: a state file is only resumed by the same caller. */
function callerOf(client: ApiClient): { api: string; key_sha256: string } {
  return { api: client.baseUrl, key_sha256: client.tokenSha256 };
}

const partSize = (state: UploadState, n: number) => (n < state.part_count ? state.part_size : state.size - state.part_size * (state.part_count - 1));
/** "" for svc upload; "NAME: " before a shard's notes. */
const label = (target: string) => (target === 'upload' ? '' : `${target.replace(/^shard [^/]*\//, '')}: `);
const missingParts = (state: UploadState) => Array.from({ length: state.part_count }, (_, i) => i + 1).filter((n) => !state.etags[n]);

/**
 * Sends a file to storage under a grant from `mint` (POST /v1/uploads or a shard grant): one
 * PUT, or its parts, completed. A multipart upload of this same file (path, size and mtime)
 * for the same target, API and key that an earlier run left unfinished is resumed instead.
 */
export async function sendFile(t: Transfer, local: LocalFile, target: string, mint: () => Promise<Grant>): Promise<Grant> {
  const caller = callerOf(t.client);
  const stateFile = stateFileOf(local.path, target, caller);
  const saved = readState(stateFile);
  const mine = saved?.api === caller.api && saved.key_sha256 === caller.key_sha256;
  if (saved && mine && saved.file === local.path && saved.size === local.size && saved.mtime_ms === local.mtimeMs && saved.target === target) {
    try {
      return await sendParts(t, local, stateFile, saved, undefined, true);
    } catch (error) {
      if (!(error instanceof UploadGone)) throw error;
      t.log(`${label(target)}the upload in progress was aborted or swept by the service: starting over`);
      fs.rmSync(stateFile, { force: true });
    }
  } else if (saved && mine) {
    // The file changed or is going elsewhere now: that upload can never complete.
    await t.client.request('POST', '/v1/uploads/abort', { storage_path: saved.storage_path, upload_id: saved.upload_id }).catch(() => undefined);
    fs.rmSync(stateFile, { force: true });
  }
  const grant = await mint();
  if (!grant.multipart) {
    if (!grant.upload_url) throw new CliError('the grant has neither an upload URL nor parts', 'bad_response');
    await t.limiter.run(() => putFile(grant.upload_url!, local.path, { start: 0, size: local.size }, t.onBytes, grant.upload_headers));
    return grant;
  }
  const m = grant.multipart;
  const state: UploadState = {
    version: 1, file: local.path, size: local.size, mtime_ms: local.mtimeMs, ...caller, target,
    storage_path: grant.storage_path, upload_id: m.upload_id, file_name: grant.file_name ?? null, file_extension: grant.file_extension ?? null,
    part_size: m.part_size, part_count: m.part_count, etags: {},
  };
  writeState(stateFile, state);
  try {
    await sendParts(t, local, stateFile, state, m, false);
  } catch (error) {
    if (error instanceof UploadGone) fs.rmSync(stateFile, { force: true });
    throw error;
  }
  return grant;
}

/** Sends the parts the state lacks, then completes; the state file goes once the file is whole. */
async function sendParts(t: Transfer, local: LocalFile, stateFile: string, state: UploadState, granted: MultipartView | undefined, resumed: boolean): Promise<Grant> {
  const landedBytes = () => Object.keys(state.etags).reduce((sum, n) => sum + partSize(state, Number(n)), 0);
  if (resumed) t.log(`${label(state.target)}resuming: ${state.part_count - missingParts(state).length} of ${state.part_count} parts already uploaded`);
  t.onBytes(landedBytes());
  try {
    for (let round = 1; !(await complete(t, state, round)); round++) {
      // A part sent again after a refused completion is signed afresh (expiry 0).
      await new PartSender(t, local, stateFile, state, round === 1 ? granted : undefined).send(missingParts(state));
    }
  } catch (error) {
    // Starting over: the bar counts those parts again.
    if (error instanceof UploadGone) t.onBytes(-landedBytes());
    throw error;
  }
  fs.rmSync(stateFile, { force: true });
  return { storage_path: state.storage_path, upload_url: null, file_name: state.file_name ?? undefined, file_extension: state.file_extension ?? undefined };
}

/**
 * Completes the upload once every part has landed: true when the file is whole at its
 * path; false while parts are missing, or when the store refused one (400 naming it: it is
 * dropped from the state, to be sent again, once).
 */
async function complete(t: Transfer, state: UploadState, round: number): Promise<boolean> {
  if (missingParts(state).length) return false;
  // Parts read before and after a rewrite of the file would join into bytes it never held.
  const now = statFile(state.file);
  if (now.size !== state.size || now.mtimeMs !== state.mtime_ms) {
    throw new CliError(`${state.file} changed while it was being uploaded; run the command again to upload it afresh`, 'file_changed');
  }
  const parts = Array.from({ length: state.part_count }, (_, i) => ({ part_number: i + 1, etag: state.etags[i + 1] }));
  try {
    await t.client.request('POST', '/v1/uploads/complete', { storage_path: state.storage_path, upload_id: state.upload_id, parts });
    return true;
  } catch (error) {
    const e = error as CliError;
    if (e.code === 'not_found') {
      // Completed already, by a run stopped before it could remove the state file?
      const landed = await t.client.request<{ exists: boolean; size: number }>('PUT', '/v1/uploads', { storage_path: state.storage_path });
      if (landed.exists && landed.size === state.size) return true;
      throw new UploadGone();
    }
    const refused = e.code === 'validation_failed' && /"parts\[(\d+)\]"/.exec(e.message);
    if (!refused || round > 2) throw error;
    const n = Number(refused[1]) + 1;
    delete state.etags[n];
    t.onBytes(-partSize(state, n));
    return false;
  }
}

/** The parts of one upload, up to the limiter's slots at a time, each retried; ETags go to the state file as they land. */
class PartSender {
  /** Signed part URLs with when each expires: the grant's first ones, then batches from /v1/uploads/parts. */
  private readonly urls = new Map<number, { url: string; expiresAt: number }>();
  /** The batch being signed, so workers that need URLs at once ask once. */
  private signing?: Promise<void>;
  private failure?: Error;

  constructor(
    private readonly t: Transfer,
    private readonly local: LocalFile,
    private readonly stateFile: string,
    private readonly state: UploadState,
    granted: MultipartView | undefined,
  ) {
    if (granted) this.keep(granted);
  }

  async send(numbers: number[]): Promise<void> {
    const queue = [...numbers];
    const worker = async () => {
      for (let n = queue.shift(); n !== undefined && !this.failure; n = queue.shift()) {
        try {
          await this.sendPart(n);
        } catch (error) {
          this.failure ??= error as Error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.t.limiter.slots, numbers.length) }, worker));
    if (!this.failure) return;
    if (this.failure instanceof UploadGone) throw this.failure;
    const left = missingParts(this.state).length;
    throw new CliError(
      `${label(this.state.target)}${this.failure.message}; ${this.state.part_count - left} of ${this.state.part_count} parts are uploaded and kept: run the same command again to resume`,
      'upload_incomplete',
    );
  }

  private async sendPart(n: number): Promise<void> {
    const size = partSize(this.state, n);
    for (let attempt = 1; ; attempt++) {
      let sent = 0;
      try {
        const url = await this.urlOf(n);
        const etag = await this.t.limiter.run(() =>
          putFile(url, this.local.path, { start: (n - 1) * this.state.part_size, size }, (bytes) => {
            sent += bytes;
            this.t.onBytes(bytes);
          }),
        );
        if (!etag) throw new CliError(`storage answered part ${n} without an ETag`, 'bad_response');
        this.state.etags[n] = etag;
        writeState(this.stateFile, this.state);
        return;
      } catch (error) {
        this.t.onBytes(-sent);
        const status = error instanceof StorageRefused ? error.status : undefined;
        if (status === 404 || error instanceof UploadGone) throw new UploadGone();
        const expired = status === 403;
        // Network failures (and the API out of reach) and 5xx pass; other refusals would only repeat.
        const transient = status === undefined ? !(error instanceof CliError) || error.code === 'unreachable' : status >= 500 || status === 408 || status === 429;
        if (attempt > RETRIES || !(expired || transient)) {
          throw new Error(`part ${n} of ${this.state.part_count} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${(error as Error).message}`);
        }
        if (expired) this.urls.delete(n);
        else await sleep(BACKOFF_MS * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
        if (this.failure) throw error;
      }
    }
  }

  /** The part's URL, signed (again) first when none is kept or it is about to expire. */
  private async urlOf(n: number): Promise<string> {
    for (;;) {
      const kept = this.urls.get(n);
      if (kept && Date.now() < kept.expiresAt - EXPIRY_MARGIN_MS) return kept.url;
      await this.sign(n);
    }
  }

  private keep(view: MultipartView): void {
    const expiresAt = Date.now() + view.expires_in * 1000;
    for (const p of view.parts) this.urls.set(p.part_number, { url: p.url, expiresAt });
  }

  /** URLs for part n and the missing parts after it, as many as one answer carries, once for all the workers asking. */
  private async sign(n: number): Promise<void> {
    if (this.signing) return this.signing;
    const batch = missingParts(this.state).filter((m) => m >= n).slice(0, PART_URLS_PER_CALL);
    this.signing = (async () => {
      const body = { storage_path: this.state.storage_path, upload_id: this.state.upload_id, part_numbers: batch.length ? batch : [n] };
      try {
        this.keep(await this.t.client.request<MultipartView>('POST', '/v1/uploads/parts', body));
      } catch (error) {
        // An upload the API no longer knows (or a state file it does not recognise) cannot be resumed.
        if (['not_found', 'validation_failed', 'invalid_storage_path'].includes((error as CliError).code)) throw new UploadGone();
        throw error;
      } finally {
        this.signing = undefined;
      }
    })();
    return this.signing;
  }
}
