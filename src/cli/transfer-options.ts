/**
 * What the commands that move files share: their --parallel option, JSON bodies, one progress
 * bar, and the TypeScript SDK's uploader (clients/typescript/src/uploads.ts: parts in
 * parallel, retries, resume) driven through this CLI's own client.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConnectionError, MarketplaceError, UploadError } from '../../clients/typescript/src/errors';
import { Retrying } from '../../clients/typescript/src/http';
import { type Grant, type LocalFile, type UploadApi, Uploader, statFile } from '../../clients/typescript/src/uploads';
import { CliError } from './admin-client';
import type { ApiClient } from './api-client';

export type { Grant, LocalFile, Uploader };

/** --parallel: how many PUTs (whole files or parts) at once, 1 to 32; 4 when not given. */
export function parallelOf(o: Record<string, any>): number {
  const parallel = o.parallel === undefined ? 4 : Number(o.parallel);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 32) throw new CliError(`--parallel must be a whole number from 1 to 32, got "${o.parallel}"`, 'usage', 2);
  return parallel;
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

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

/** One progress bar over `total` bytes: the bytes moved (negative for those to be moved again). */
export function progress(total: number, quiet: boolean): (bytes: number) => void {
  const bar = progressBar(total, quiet);
  let sent = 0;
  return (bytes) => bar((sent += bytes));
}

/** A CliError of the client, as the SDK's uploader tells errors apart (an API error with its code; the service out of reach). */
class ClientError extends MarketplaceError {
  constructor(readonly original: CliError) {
    super(original.message, { cause: original });
  }
  get code(): string {
    return this.original.code;
  }
}
class ClientUnreachable extends ConnectionError {
  constructor(readonly original: CliError) {
    super(original.message, { cause: original });
  }
}

/**
 * The client as the uploader's: its calls (with the command's --idempotency-key), its key
 * naming the resume state files, and a single PUT tried once, as `svc upload` always did.
 */
function uploadApi(client: ApiClient): UploadApi {
  return {
    baseUrl: client.baseUrl,
    keySha256: client.tokenSha256,
    request: async (method, route, body) => {
      try {
        return await client.request(method, route, body);
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        throw error.code === 'unreachable' ? new ClientUnreachable(error) : new ClientError(error);
      }
    },
    retrying: new Retrying(0),
  };
}

/**
 * The uploader of one command: PUTs `parallel` at a time over all its files, one progress
 * bar over `total` bytes, notes on stderr unless --json, the resume state files under
 * $XDG_CACHE_HOME/svc/uploads (or ~/.cache/svc/uploads).
 */
export function uploaderOf(client: ApiClient, total: number, parallel: number, quiet: boolean): Uploader {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return new Uploader(uploadApi(client), {
    parallel,
    stateDir: path.join(cache, 'svc', 'uploads'),
    onBytes: progress(total, quiet),
    onNote: (line) => quiet || process.stderr.write(`${line}\n`),
    again: 'run the same command again',
  });
}

/** An error of the SDK's uploader as this CLI reports it (code, exit status 2 for a usage error). */
export function cliErrorOf(error: unknown): unknown {
  if (error instanceof ClientError || error instanceof ClientUnreachable) return error.original;
  if (error instanceof UploadError) return new CliError(error.message, error.code, error.code === 'usage' ? 2 : 1);
  if (error instanceof ConnectionError) {
    // A storage refusal a retry might have fixed (5xx) keeps its code, as the CLI always said it.
    const cause = error.cause;
    const code = cause instanceof MarketplaceError ? (cause as { code?: unknown }).code : undefined;
    return new CliError(error.message, typeof code === 'string' ? code : 'error');
  }
  return error;
}

/**
 * Sends a file under a grant from `mint` (POST /v1/uploads or a shard grant): one PUT, or its
 * parts, completed; an upload of this same file to the same target that an earlier run left
 * unfinished is resumed instead (the SDK's Uploader.send).
 */
export async function sendFile(uploader: Uploader, file: string, target: string, mint: () => Promise<Grant>): Promise<Grant> {
  try {
    return await uploader.send(file, target, mint);
  } catch (error) {
    throw cliErrorOf(error);
  }
}

/** A file as stat saw it; a usage error (exit status 2) when it cannot be read. */
export function localFile(file: string): LocalFile {
  try {
    return statFile(file);
  } catch (error) {
    throw cliErrorOf(error);
  }
}

export function readJsonObject(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError(`cannot read ${file} as JSON: ${(error as Error).message}`, 'usage', 2);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`${file} must hold a JSON object`, 'usage', 2);
  return parsed as Record<string, unknown>;
}
