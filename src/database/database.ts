/**
 * The Database port: one interface over a Postgres server (pg.Pool) and the embedded
 * PGlite. Both return int8 and numeric columns as strings, timestamps as Date and
 * jsonb as parsed values, so callers never branch on the driver.
 */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/** How a statement is sent. */
export interface QueryOptions {
  /**
   * A name unique to this text: on a Postgres server the statement is parsed and planned once
   * per connection and then only bound and executed (a hot statement of many CTEs spent as
   * long in planning as in running). PGlite ignores it.
   */
  prepared?: string;
}

export interface Queryable {
  query<R = Record<string, any>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /** Runs a script of several statements without parameters (migrations, DDL). */
  exec(script: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs fn in one transaction. Inside fn, use only `tx`: PGlite has a single connection,
   * so a query on the database itself would wait for this transaction to end.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Calls onNotify with the payload of each NOTIFY on channel; resolves to an unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export const DATABASE = Symbol('Database');

/**
 * Whether a query failed because a table of a read model is not served yet: a new version of
 * its projection that adds the table is catching up beside the old one (the first start after
 * an upgrade). Its readers answer from the old version's tables meanwhile.
 */
export function isTableNotServedYet(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '42P01'; // undefined_table
}
