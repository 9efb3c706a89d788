/**
 * Downloads with their checks: the bytes go to a temporary file beside the destination, are
 * hashed as they arrive, and are renamed into place only when size and sha256 are the ones
 * the service published. A file that does not match is deleted, never left looking complete.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChecksumMismatchError, ConnectionError, MarketplaceError } from './errors';
import { Retrying, asConnectionError } from './http';

/** Lowercase hex SHA-256 of a file, read once in 1 MiB chunks. */
export async function sha256Of(file: string): Promise<string> {
  const digest = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 })) digest.update(chunk as Buffer);
  return digest.digest('hex');
}

/**
 * GETs a signed URL (no API key: it is storage, not the API) into `destination`; returns its
 * path. A broken transfer or no byte for `idleMs` is retried; other bytes than the published
 * ones throw ChecksumMismatchError and leave nothing behind.
 */
export async function fetchVerified(
  retrying: Retrying, url: string, destination: string, size: number | null | undefined, sha256: string | null | undefined, idleMs: number,
): Promise<string> {
  const directory = path.dirname(path.resolve(destination));
  fs.mkdirSync(directory, { recursive: true });
  const name = path.basename(destination);
  return retrying.run(async () => {
    const temp = path.join(directory, `.download-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const idle = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new ConnectionError(`${name}: no byte for ${idleMs / 1000} s`)), idleMs);
    };
    const out = fs.openSync(temp, 'w', 0o644);
    let closed = false;
    try {
      idle();
      let response: Response;
      try {
        response = await fetch(url, { signal: controller.signal });
      } catch (error) {
        throw controller.signal.reason instanceof ConnectionError ? controller.signal.reason : asConnectionError(error, `GET ${name}`, idleMs);
      }
      if (!response.ok || !response.body) {
        const text = await response.text().catch(() => '');
        const error = new MarketplaceError(`${name}: storage answered HTTP ${response.status}: ${text.slice(0, 200)}`);
        throw response.status >= 500 || response.status === 429 ? new ConnectionError(error.message) : error;
      }
      const digest = createHash('sha256');
      let length = 0;
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          idle();
          digest.update(chunk);
          length += chunk.length;
          fs.writeSync(out, chunk);
        }
      } catch (error) {
        throw controller.signal.reason instanceof ConnectionError ? controller.signal.reason : asConnectionError(error, `GET ${name}`, idleMs);
      }
      fs.closeSync(out);
      closed = true;
      // A whole answer of another length is other bytes than the ones published.
      if (size !== null && size !== undefined && length !== size) throw new ChecksumMismatchError(name, `${size} bytes`, `${length} bytes`);
      const got = digest.digest('hex');
      if (sha256 && got !== sha256) throw new ChecksumMismatchError(name, `sha256 ${sha256}`, `sha256 ${got}`);
      fs.renameSync(temp, destination);
      return destination;
    } finally {
      clearTimeout(timer);
      if (!closed) fs.closeSync(out);
      fs.rmSync(temp, { force: true });
    }
  });
}

/** A file kept from an earlier download that is exactly the published one is not fetched again. */
export async function alreadyThere(file: string, size: number | null | undefined, sha256: string | null | undefined): Promise<boolean> {
  try {
    return Boolean(sha256) && fs.statSync(file).isFile() && fs.statSync(file).size === size && (await sha256Of(file)) === sha256;
  } catch {
    return false;
  }
}

/** A name the service gave, as a file name: never a path out of the destination directory. */
export function safeName(name: string): string {
  const base = path.basename(name.replace(/\\/g, '/'));
  if (!base || base === '.' || base === '..') throw new MarketplaceError(`the service named a file ${JSON.stringify(name)}, which is not a file name`);
  return base;
}
