import { PGlite, types } from '@electric-sql/pglite';
import { Database, Queryable, QueryResult } from './database';

interface PGliteLike {
  query<R>(text: string, params?: any[]): Promise<{ rows: R[]; affectedRows?: number }>;
  exec(script: string): Promise<unknown>;
}

function wrap(target: PGliteLike): Queryable {
  return {
    async query<R>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const result = await target.query<R>(text, params as any[] | undefined);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(script: string): Promise<void> {
      await target.exec(script);
    },
  };
}

/** Embedded Postgres in this process: a directory, or memory when dataDir is undefined. */
export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  private readonly direct: Queryable;

  private constructor(private readonly db: PGlite) {
    this.direct = wrap(db);
  }

  /** `from`: start from a dump (dumpDataDir) instead of an empty cluster, which skips initdb. */
  static async open(dataDir?: string, from?: Blob): Promise<PgliteDatabase> {
    // Parse int8 and numeric as strings, as node-postgres does, so both drivers agree.
    const asText = (value: string) => value;
    const db = await PGlite.create(dataDir, {
      parsers: { [types.INT8]: asText, [types.NUMERIC]: asText },
      ...(from ? { loadDataDir: from } : {}),
    });
    return new PgliteDatabase(db);
  }

  /** The whole cluster as a tarball, for open(..., from). */
  dump(): Promise<Blob> {
    return this.db.dumpDataDir('none');
  }

  query<R = Record<string, any>>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
    return this.direct.query<R>(text, params);
  }

  exec(script: string): Promise<void> {
    return this.direct.exec(script);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn(wrap(tx)));
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    const unlisten = await this.db.listen(channel, (payload) => onNotify(payload));
    return async () => {
      await unlisten();
    };
  }

  async close(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}
