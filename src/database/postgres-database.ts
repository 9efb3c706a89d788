import { Client, Pool, PoolClient } from 'pg';
import { Database, Queryable, QueryOptions, QueryResult } from './database';

function wrap(client: Pool | PoolClient): Queryable {
  return {
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
      const values = params as unknown[] | undefined;
      const result = await (options?.prepared ? client.query({ name: options.prepared, text, values }) : client.query(text, values));
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
    async exec(script: string): Promise<void> {
      await client.query(script);
    },
  };
}

/** A Postgres server reached through a pg.Pool. */
export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  private readonly pool: Pool;
  private readonly direct: Queryable;
  private readonly listeners = new Set<Client>();

  constructor(private readonly connectionString: string, poolSize = 10) {
    this.pool = new Pool({ connectionString, max: poolSize });
    // An idle client that errors (server restart) must not crash the process.
    this.pool.on('error', () => undefined);
    this.direct = wrap(this.pool);
  }

  query<R = Record<string, any>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    return this.direct.query<R>(text, params, options);
  }

  exec(script: string): Promise<void> {
    return this.direct.exec(script);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(wrap(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * LISTEN on a dedicated connection. A lost connection is re-opened in the background;
   * callers keep a polling fallback, so a missed notification only delays them.
   */
  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    let stopped = false;
    let current: Client | undefined;
    const connect = async (): Promise<void> => {
      const client = new Client({ connectionString: this.connectionString });
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      client.on('error', () => {
        this.listeners.delete(client);
        client.end().catch(() => undefined);
        if (!stopped) setTimeout(() => void connect().catch(() => undefined), 1000).unref();
      });
      await client.connect();
      await client.query(`LISTEN "${channel.replace(/"/g, '')}"`);
      if (stopped) {
        await client.end();
        return;
      }
      current = client;
      this.listeners.add(client);
    };
    await connect();
    return async () => {
      stopped = true;
      if (current) {
        this.listeners.delete(current);
        await current.end().catch(() => undefined);
      }
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.listeners].map((c) => c.end().catch(() => undefined)));
    this.listeners.clear();
    await this.pool.end();
  }
}
