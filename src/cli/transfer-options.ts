/** What the commands that move files share: their --parallel option, JSON bodies, one progress bar. */
import * as fs from 'node:fs';
import { CliError } from './admin-client';
import type { ApiClient } from './api-client';
import { Limiter, progressBar, Transfer } from './uploader';

/** --parallel: how many PUTs (whole files or parts) at once, 1 to 32; 4 when not given. */
export function parallelOf(o: Record<string, any>): number {
  const parallel = o.parallel === undefined ? 4 : Number(o.parallel);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 32) throw new CliError(`--parallel must be a whole number from 1 to 32, got "${o.parallel}"`, 'usage', 2);
  return parallel;
}

/** One progress bar over `total` bytes, notes on stderr unless --json, PUTs `parallel` at a time. */
export function transfer(client: ApiClient, total: number, parallel: number, quiet: boolean): Transfer {
  const bar = progressBar(total, quiet);
  let sent = 0;
  return {
    client,
    limiter: new Limiter(parallel),
    onBytes: (bytes) => bar((sent += bytes)),
    log: (line) => quiet || process.stderr.write(`${line}\n`),
  };
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

