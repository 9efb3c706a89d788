/**
 * `svc events copy --to esdb://...`: runs in the CLI process against the service's own
 * database (DATABASE_URL, else DATA_DIR/pglite), not through /admin: a one-off move made
 * with the service stopped, so nothing appends while the log is copied and verified, and
 * no HTTP request has to outlive a long copy (docs/decisions.md).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { redactUrl } from '../config/settings';
import type { Database } from '../database/database';
import { PgliteDatabase } from '../database/pglite-database';
import { PostgresDatabase } from '../database/postgres-database';
import { copyEvents } from '../event-store/copy/copy-events';
import { CopyDifference, verifyCopy } from '../event-store/copy/verify-copy';
import { EventStoreDbEventStore } from '../event-store/eventstoredb/eventstoredb-event-store';
import { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import { CliError } from './admin-client';

export interface EventsCopyResult {
  ok: boolean;
  streams: number;
  events: number;
  copied: number;
  already_there: number;
  verified_streams: number;
  first_difference?: { stream: string; source: { events: number; sha256: string }; target: { events: number; sha256: string } };
}

export async function eventsCopy(to: string, env: NodeJS.ProcessEnv): Promise<EventsCopyResult> {
  if (!/^(esdb|kurrentdb|kurrent)(\+discover)?:\/\/[^/?#\s]+/.test(to)) {
    throw new CliError(`--to must be an EventStoreDB connection string such as esdb://127.0.0.1:2113?tls=false, got "${redactUrl(to)}"`, 'usage', 2);
  }
  const target = await openTarget(to);
  let database: Database | undefined;
  try {
    database = await openSource(env);
    const source = new PostgresEventStore(database);
    const copy = await copyEvents(source, target);
    const verified = await verifyCopy(source, target, copy.streams.keys());
    const events = [...copy.streams.values()].reduce((a, b) => a + b, 0);
    return {
      ok: !verified.firstDifference,
      streams: copy.streams.size,
      events,
      copied: copy.copied,
      already_there: copy.skipped,
      verified_streams: verified.streams,
      ...(verified.firstDifference ? { first_difference: shown(verified.firstDifference) } : {}),
    };
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(String((error as Error).message ?? error).split('\n')[0], 'copy_failed');
  } finally {
    await target.close().catch(() => undefined);
    await database?.close().catch(() => undefined);
  }
}

async function openTarget(to: string): Promise<EventStoreDbEventStore> {
  let target: EventStoreDbEventStore;
  try {
    target = new EventStoreDbEventStore({ url: to });
  } catch (error) {
    throw new CliError(`--to "${redactUrl(to)}" is not a valid connection string: ${String((error as Error).message).split('\n')[0]}`, 'usage', 2);
  }
  try {
    await target.start();
  } catch (error) {
    await target.close().catch(() => undefined);
    throw new CliError(`EventStoreDB at ${redactUrl(to)} did not answer: ${String((error as Error).message).split('\n')[0]}`, 'unreachable');
  }
  return target;
}

/** The service's database as the service itself would open it, but never a new, empty PGlite. */
async function openSource(env: NodeJS.ProcessEnv): Promise<Database> {
  if (env.DATABASE_URL) return new PostgresDatabase(env.DATABASE_URL);
  const dir = path.join(path.resolve(env.DATA_DIR || './data'), 'pglite');
  if (!fs.existsSync(dir)) throw new CliError(`no event log to copy: DATABASE_URL is unset and ${dir} does not exist (set DATA_DIR)`);
  return PgliteDatabase.open(dir);
}

function shown(d: CopyDifference): EventsCopyResult['first_difference'] {
  return { stream: d.streamId, source: d.source, target: d.target };
}

export function describeCopy(r: EventsCopyResult): string {
  if (r.first_difference) {
    const d = r.first_difference;
    return `copy differs: stream ${d.stream} has ${d.source.events} events (sha256 ${d.source.sha256.slice(0, 12)}) in the source, ${d.target.events} (sha256 ${d.target.sha256.slice(0, 12)}) in EventStoreDB`;
  }
  return `copied ${r.copied} events (${r.already_there} already there); verified ${r.verified_streams} streams, ${r.events} events: counts and hashes match`;
}
