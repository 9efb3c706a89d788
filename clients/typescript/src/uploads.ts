/**
 * Moving a file's bytes to the signed URLs of an upload grant: one PUT, or, when the grant has
 * `multipart`, its parts `parallel` at a time, each retried, completed with
 * `POST /v1/uploads/complete`. The ETags of the parts done are kept in a state file (never the
 * key itself), so calling the same upload again after an interruption sends only the parts
 * still missing. The operator CLI (`svc upload`, `svc datasets upload`, src/cli/ in the
 * server's repository) uploads with this code too, through its own client (UploadApi).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConnectionError, MarketplaceError, NotFoundError, UploadError } from './errors';
import { sleep } from './http';
import type { components } from './generated/api';

export type MultipartView = components['schemas']['MultipartUpload'];

/** What an upload grant (POST /v1/uploads, or a dataset's shard grant) says about where the bytes go. */
export interface Grant {
  storage_path: string;
  upload_url: string | null;
  upload_headers?: Record<string, string>;
  multipart?: MultipartView;
  file_name?: string;
  file_extension?: string;
}

/** The fields a model publish takes, from `uploads.file()`. */
export interface UploadedFile {
  storage_path: string;
  file_name: string;
  file_size: number;
  file_extension: string | null;
}

/** Bytes landed so far (whole parts) and the file's size. A throw from it stops the upload, resumable. */
export type Progress = (sent: number, total: number) => void;

/**
 * What the uploader needs of a client: the SDK's Transport is one. API errors carry the API's
 * `code` (`not_found`, `validation_failed`...) and are MarketplaceErrors; a ConnectionError
 * (the API or storage out of reach) is one a later attempt may not meet.
 */
export interface UploadApi {
  /** The service's root URL: with keySha256, it names the state file of an upload in progress. */
  readonly baseUrl: string;
  /** The hex sha256 of the caller's key (the key itself is never written down). */
  readonly keySha256: string;
  request<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Runs a single-PUT upload, again when it fails with a ConnectionError, as the client's own calls are. */
  readonly retrying: { run<T>(call: (attempt: number) => Promise<T>): Promise<T> };
}

const PART_RETRIES = 3;
const BACKOFF_MS = 1000;
/** A PUT with no byte moving either way for this long is dropped and retried. */
const IDLE_MS = 120_000;
/** The most part URLs one POST /v1/uploads/parts signs. */
const PART_URLS_PER_CALL = 100;
/** Part URLs are signed again this long before they expire, rather than sent and refused. */
const EXPIRY_MARGIN_MS = 5 * 60_000;

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

export interface LocalFile {
  path: string;
  size: number;
  mtimeMs: number;
}

export function statFile(file: string): LocalFile {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    throw new UploadError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'usage');
  }
  if (!stat.isFile()) throw new UploadError(`${file} is not a file`, 'usage');
  return { path: path.resolve(file), size: stat.size, mtimeMs: stat.mtimeMs };
}

/** A storage server's refusal, with its HTTP status and the code of its JSON error (our service's own storage), else `storage_STATUS`. */
class StorageRefused extends MarketplaceError {
  constructor(message: string, readonly code: string, readonly status: number) {
    super(message);
  }
}

/** The multipart upload is no more (aborted, swept, or completed elsewhere): only a new grant helps. */
class UploadGone extends UploadError {
  constructor(again: string) {
    super(`the upload in progress was aborted or swept by the service; ${again} to start over`, 'upload_gone');
  }
}

/** The `code` of an error (the API's, for an API error), if it has one. */
const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/**
 * Streams `size` bytes of a file from `start` to a signed URL with their exact length (S3
 * signs content-length); the answer's ETag. `onBytes` hears of every chunk as it goes out.
 */
export async function putFile(
  url: string, file: string, range: { start: number; size: number }, headers: Record<string, string> = {}, onBytes?: (bytes: number) => void,
): Promise<string | undefined> {
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : http;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      onBytes?.(chunk.length);
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
  // A server refusing before it read the body may stop reading it without closing: the sending stops with the refusal.
  answered.catch(() => request.destroy());
  // The server's answer explains a failure better than the broken pipe it may cause (a 413 arrives while bytes still go out).
  const [sending, answer] = await Promise.allSettled([pipeline(source, counter, request), answered]);
  if (answer.status === 'rejected') throw answer.reason;
  if (sending.status === 'rejected') throw sending.reason;
  return answer.value;
}

/** What a multipart upload in progress keeps between calls; never the API key itself. */
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
  etags: Record<string, string>;
}

function readState(file: string): UploadState | undefined {
  try {
    const state = JSON.parse(fs.readFileSync(file, 'utf8'));
    return state?.version === 1 && state.etags && typeof state.etags === 'object' ? state : undefined;
  } catch {
    return undefined;
  }
}

let writes = 0;
/** Written whole or not at all: a process killed mid-write leaves the previous state. */
function writeState(file: string, state: UploadState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${++writes}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(state), { mode: 0o600 });
  fs.renameSync(temp, file);
}

const partSize = (s: UploadState, n: number) => (n < s.part_count ? s.part_size : s.size - s.part_size * (s.part_count - 1));
const missingParts = (s: UploadState) => Array.from({ length: s.part_count }, (_, i) => i + 1).filter((n) => !s.etags[n]);
const landedBytes = (s: UploadState) => Object.keys(s.etags).reduce((sum, n) => sum + partSize(s, Number(n)), 0);
/** "" for a file; "NAME: " before what is said of a dataset's shard. */
const label = (target: string) => (target.startsWith('shard ') ? `${target.replace(/^shard [^/]*\//, '')}: ` : '');

export interface UploaderOptions {
  /** Parts (and files of a directory) in flight at once, 1-32 (default 4). */
  parallel?: number;
  /** Where unfinished multipart uploads are remembered (default $XDG_CACHE_HOME or ~/.cache, then robotics-marketplace/uploads). */
  stateDir?: string;
  /**
   * Every chunk as it goes out, of every file this uploader sends; negative for the bytes of a
   * failed attempt (sent again) and, when an upload resumes, first the bytes already landed:
   * the sum is what a byte-by-byte progress bar over all of them shows.
   */
  onBytes?: (bytes: number) => void;
  /** What the uploader has to say that is not an error ("resuming: 3 of 6 parts already uploaded"). */
  onNote?: (line: string) => void;
  /** How the messages of a resumable failure end, before "to resume" (default "call the same upload again"). */
  again?: string;
}

export class Uploader {
  readonly limiter: Limiter;
  readonly stateDir: string;
  readonly onBytes: (bytes: number) => void;
  readonly onNote: (line: string) => void;
  readonly again: string;

  constructor(private readonly t: UploadApi, options: UploaderOptions = {}) {
    const parallel = options.parallel ?? 4;
    if (!Number.isInteger(parallel) || parallel < 1 || parallel > 32) throw new MarketplaceError('parallel must be an integer from 1 to 32');
    this.limiter = new Limiter(parallel);
    const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
    this.stateDir = options.stateDir ?? path.join(cache, 'robotics-marketplace', 'uploads');
    this.onBytes = options.onBytes ?? (() => undefined);
    this.onNote = options.onNote ?? (() => undefined);
    this.again = options.again ?? 'call the same upload again';
  }

  /** The error of an upload the service no longer has. */
  gone(): UploadError {
    return new UploadGone(this.again);
  }

  /** Uploads a file for a model publish; the fields to pass on to `models.create`. */
  async file(file: string, onProgress?: Progress): Promise<UploadedFile> {
    const local = statFile(file);
    const name = path.basename(local.path);
    const grant = await this.send(local.path, 'upload', () => this.t.request<Grant>('POST', '/v1/uploads', { file_name: name, file_size: local.size }), onProgress);
    const landed = await this.t.request<{ exists: boolean; size: number }>('PUT', '/v1/uploads', { storage_path: grant.storage_path });
    if (!landed.exists || landed.size !== local.size) {
      throw new UploadError(`the upload did not land whole (${landed.size ?? 0} of ${local.size} bytes stored); upload it again`);
    }
    return { storage_path: grant.storage_path, file_name: grant.file_name ?? name, file_size: local.size, file_extension: grant.file_extension ?? null };
  }

  /**
   * Sends a file under a grant from `mint` (an upload or a shard grant). A multipart upload of
   * this same file (path, size, mtime) to the same target, service and key that an earlier
   * call left unfinished is resumed instead of minted again.
   */
  async send(file: string, target: string, mint: () => Promise<Grant>, onProgress: Progress = () => undefined): Promise<Grant> {
    const local = statFile(file);
    const caller = { api: this.t.baseUrl, key_sha256: this.t.keySha256 };
    const stateFile = path.join(this.stateDir, `${createHash('sha256').update(JSON.stringify([local.path, target, caller.api, caller.key_sha256])).digest('hex')}.json`);
    const saved = readState(stateFile);
    if (saved && saved.file === local.path && saved.size === local.size && saved.mtime_ms === local.mtimeMs && saved.target === target) {
      try {
        return await this.sendParts(local, stateFile, saved, undefined, onProgress);
      } catch (error) {
        if (!(error instanceof UploadGone)) throw error;
        this.onNote(`${label(target)}the upload in progress was aborted or swept by the service: starting over`);
        fs.rmSync(stateFile, { force: true });
      }
    } else if (saved) {
      // The file changed since: that upload can never complete.
      await this.t.request('POST', '/v1/uploads/abort', { storage_path: saved.storage_path, upload_id: saved.upload_id }).catch(() => undefined);
      fs.rmSync(stateFile, { force: true });
    }
    const grant = await mint();
    if (!grant.multipart) {
      if (!grant.upload_url) throw new UploadError('the grant has neither an upload URL nor parts', 'bad_response');
      await this.t.retrying.run(() =>
        storageCall(() => this.limiter.run(async () => {
          let sent = 0;
          try {
            return await putFile(grant.upload_url!, local.path, { start: 0, size: local.size }, grant.upload_headers, (bytes) => {
              sent += bytes;
              this.onBytes(bytes);
            });
          } catch (error) {
            this.onBytes(-sent);
            throw error;
          }
        }), false),
      );
      onProgress(local.size, local.size);
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
      await this.sendParts(local, stateFile, state, m, onProgress);
    } catch (error) {
      if (error instanceof UploadGone) fs.rmSync(stateFile, { force: true });
      throw error;
    }
    return grant;
  }

  /** Sends the parts the state lacks, then completes; the state file goes once the file is whole. */
  private async sendParts(local: LocalFile, stateFile: string, state: UploadState, granted: MultipartView | undefined, onProgress: Progress): Promise<Grant> {
    if (!granted) this.onNote(`${label(state.target)}resuming: ${state.part_count - missingParts(state).length} of ${state.part_count} parts already uploaded`);
    onProgress(landedBytes(state), state.size);
    this.onBytes(landedBytes(state));
    try {
      for (let round = 1; !(await this.complete(state, stateFile, round)); round++) {
        // A part sent again after a refused completion is signed afresh.
        await new PartSender(this, this.t, local, stateFile, state, round === 1 ? granted : undefined, onProgress).send(missingParts(state));
      }
    } catch (error) {
      // Starting over: those parts are sent again.
      if (error instanceof UploadGone) this.onBytes(-landedBytes(state));
      throw error;
    }
    fs.rmSync(stateFile, { force: true });
    return { storage_path: state.storage_path, upload_url: null, file_name: state.file_name ?? undefined, file_extension: state.file_extension ?? undefined };
  }

  /**
   * True once the file is whole at its path; false while parts are missing, or when the store
   * refused one (400 naming it: dropped from the state, to be sent again, twice at most).
   */
  private async complete(state: UploadState, stateFile: string, round: number): Promise<boolean> {
    if (missingParts(state).length) return false;
    // Parts read before and after a rewrite of the file would join into bytes it never held.
    const now = statFile(state.file);
    if (now.size !== state.size || now.mtimeMs !== state.mtime_ms) {
      throw new UploadError(`${state.file} changed while it was being uploaded; ${this.again} to upload it afresh`, 'file_changed');
    }
    const parts = Array.from({ length: state.part_count }, (_, i) => ({ part_number: i + 1, etag: state.etags[i + 1] }));
    try {
      await this.t.request('POST', '/v1/uploads/complete', { storage_path: state.storage_path, upload_id: state.upload_id, parts });
      return true;
    } catch (error) {
      if (error instanceof NotFoundError || codeOf(error) === 'not_found') {
        // Completed already, by a call stopped before it could remove the state file?
        const landed = await this.t.request<{ exists: boolean; size: number }>('PUT', '/v1/uploads', { storage_path: state.storage_path });
        if (landed.exists && landed.size === state.size) return true;
        throw this.gone();
      }
      const refused = codeOf(error) === 'validation_failed' && /"parts\[(\d+)\]"/.exec((error as Error).message);
      if (!refused || round > 2) throw error;
      const n = Number(refused[1]) + 1;
      delete state.etags[n];
      this.onBytes(-partSize(state, n));
      writeState(stateFile, state);
      return false;
    }
  }
}

/** A storage refusal a retry may fix (5xx, 408, 429; an expired URL when it is signed again) passes as retryable. */
async function storageCall<T>(call: () => Promise<T>, resign = true): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StorageRefused) {
      if (error.status >= 500 || error.status === 408 || error.status === 429 || (resign && error.status === 403)) throw new ConnectionError(error.message, { cause: error });
      throw new UploadError(error.message, error.code, { cause: error });
    }
    if (error instanceof MarketplaceError) throw error;
    throw new ConnectionError(`storage could not be reached: ${(error as Error).message}`, { cause: error });
  }
}

/** The parts of one upload, up to the limiter's slots at a time, each retried; ETags go to the state file as they land. */
class PartSender {
  private readonly urls = new Map<number, { url: string; expiresAt: number }>();
  /** The batch being signed, so workers that need URLs at once ask once. */
  private signing?: Promise<void>;
  private failure?: unknown;

  private readonly limiter: Limiter;

  constructor(
    private readonly uploader: Uploader,
    private readonly t: UploadApi,
    private readonly local: LocalFile,
    private readonly stateFile: string,
    private readonly state: UploadState,
    granted: MultipartView | undefined,
    private readonly onProgress: Progress,
  ) {
    this.limiter = uploader.limiter;
    if (granted) this.keep(granted);
  }

  async send(numbers: number[]): Promise<void> {
    const queue = [...numbers];
    const worker = async () => {
      for (let n = queue.shift(); n !== undefined && !this.failure; n = queue.shift()) {
        try {
          await this.sendPart(n);
          this.onProgress(landedBytes(this.state), this.state.size);
        } catch (error) {
          this.failure ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.limiter.slots, numbers.length) }, worker));
    if (this.failure === undefined) return;
    if (this.failure instanceof UploadGone) throw this.failure;
    const left = missingParts(this.state).length;
    const why = this.failure instanceof Error ? this.failure.message : String(this.failure);
    throw new UploadError(
      `${label(this.state.target)}${why}; ${this.state.part_count - left} of ${this.state.part_count} parts are uploaded and kept: ${this.uploader.again} to resume`,
      'upload_incomplete',
      { cause: this.failure },
    );
  }

  private async sendPart(n: number): Promise<void> {
    const size = partSize(this.state, n);
    for (let attempt = 1; ; attempt++) {
      let sent = 0;
      try {
        const url = await this.urlOf(n);
        const etag = await this.limiter.run(() =>
          putFile(url, this.local.path, { start: (n - 1) * this.state.part_size, size }, {}, (bytes) => {
            sent += bytes;
            this.uploader.onBytes(bytes);
          }),
        );
        if (!etag) throw new UploadError(`storage answered part ${n} without an ETag`, 'bad_response');
        this.state.etags[n] = etag;
        writeState(this.stateFile, this.state);
        return;
      } catch (error) {
        this.uploader.onBytes(-sent);
        const status = error instanceof StorageRefused ? error.status : undefined;
        if (status === 404 || error instanceof UploadGone) throw this.uploader.gone();
        const expired = status === 403;
        // Network failures (storage, or the API, out of reach) and 5xx pass; other refusals (and the API's own errors) would only repeat.
        const transient = status === undefined ? !(error instanceof MarketplaceError) || error instanceof ConnectionError : status >= 500 || status === 408 || status === 429;
        if (attempt > PART_RETRIES || !(expired || transient)) {
          throw new UploadError(`part ${n} of ${this.state.part_count} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${(error as Error).message}`, 'upload_incomplete', { cause: error });
        }
        if (expired) this.urls.delete(n);
        else await sleep(BACKOFF_MS * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
        if (this.failure !== undefined) throw error;
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
        this.keep(await this.t.request<MultipartView>('POST', '/v1/uploads/parts', body));
      } catch (error) {
        // An upload the API no longer knows (or a state file it does not recognise) cannot be resumed.
        if (['not_found', 'validation_failed', 'invalid_storage_path'].includes(codeOf(error) ?? '')) throw this.uploader.gone();
        throw error;
      } finally {
        this.signing = undefined;
      }
    })();
    return this.signing;
  }
}
