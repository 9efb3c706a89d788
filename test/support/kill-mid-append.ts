import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { ADMIN_TOKEN, spawnWorker, TestApp } from './app';
import { freePort } from './cli';
import type { TestDatabase } from './database';
import { eventually } from './eventually';

/**
 * kill -9 in the middle of an append (the ledger's crash suites: adopt, close, adjust). A
 * worker process (the built service) takes an operator request; a lock on one of the event
 * store's tables holds the request inside its append; the worker is SIGKILLed there. Two
 * processes cannot share PGlite, and the lock is a Postgres one: these run on the Postgres
 * server with the events in Postgres.
 */
export class KillableWorker {
  private process?: ChildProcess;

  constructor(
    private readonly t: TestApp & { database: TestDatabase },
    private readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Starts a worker process on the suite's database; its base URL once it listens. */
  async start(): Promise<string> {
    const port = await freePort();
    this.process = await spawnWorker(this.t.database, this.dataDir, { ...this.env, PORT: String(port), HOST: '127.0.0.1' });
    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200, 60000, 'the worker to listen');
    return base;
  }

  /**
   * Starts a worker, sends it `POST path` as the operator, holds the request inside an append
   * by a lock on `table`, and SIGKILLs the process there. Returns once the killed process's
   * database backends have ended: Postgres does not see a client die while its statement
   * waits, so a killed process's one-statement append still runs (and commits) once the lock
   * is released. Only then is the outcome of the kill settled.
   */
  async killMidAppend(path: string, body: unknown, table: 'events' | 'streams', headers: Record<string, string> = {}): Promise<void> {
    const base = await this.start();
    const locker = new Client({ connectionString: this.t.database.url });
    await locker.connect();
    let waiting: number[] = [];
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
      const interrupted = fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }).catch((error) => error);
      await eventually(async () => (waiting = await this.backendsWaitingOnLocks()).length > 0, 30000, `POST ${path} to wait inside an append`);
      this.process!.kill('SIGKILL');
      await new Promise((resolve) => this.process!.once('exit', resolve));
      if (!/fetch failed/.test(String(await interrupted))) throw new Error(`POST ${path} answered before the kill: ${String(await interrupted)}`);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    await eventually(async () => {
      const { rows } = await this.t.db.query('SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[])', [waiting]);
      return rows.length === 0;
    }, 30000, "the killed process's backends to end");
  }

  /** Kills what is left of the worker (afterAll). */
  stop(): void {
    this.process?.kill('SIGKILL');
  }

  private async backendsWaitingOnLocks(): Promise<number[]> {
    const { rows } = await this.t.db.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    return rows.map((r) => r.pid);
  }
}
