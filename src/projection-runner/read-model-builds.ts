import type { Database, Queryable } from '../database/database';
import { ensureCheckpoint } from './checkpoint';
import type { Projection } from './projection';

export type BuildState = 'building' | 'live' | 'retired';

/** One build of a read model: a projection version replayed into its own schema. */
export interface Build {
  /** Also its checkpoint's name: "<projection>:v<version>", with a suffix for rebuilds. */
  id: string;
  projection: string;
  version: number;
  schema: string;
  state: BuildState;
}

interface BuildRow {
  id: string;
  projection: string;
  version: number;
  schema_name: string;
  state: BuildState;
}

const toBuild = (r: BuildRow): Build => ({ id: r.id, projection: r.projection, version: r.version, schema: r.schema_name, state: r.state });
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Until tx ends, unqualified table names resolve to this build's tables (before the views
 * in public): a projection writes its build, an audit reads one build whatever a concurrent
 * switch does to the views.
 */
export async function readFromSchema(tx: Queryable, schema: string): Promise<void> {
  await tx.query(`SELECT set_config('search_path', $1, true)`, [`${ident(schema)}, public`]);
}

/** The build serving a projection's queries, with its checkpoint; undefined before its first build. */
export async function liveBuild(q: Queryable, projection: string): Promise<{ id: string; schema: string; position: string } | undefined> {
  const { rows } = await q.query<{ id: string; schema_name: string; position: string }>(
    `SELECT b.id, b.schema_name, c.position FROM projection_builds b JOIN projection_checkpoints c ON c.name = b.id
      WHERE b.projection = $1 AND b.state = 'live'`,
    [projection],
  );
  return rows[0] && { id: rows[0].id, schema: rows[0].schema_name, position: rows[0].position };
}

/**
 * Blue/green read models. Each build of a projection writes the tables of its own schema;
 * queries read the views public.<table>, which point at the live build. A new build (a new
 * version, or `svc projections rebuild`) catches up beside the live one in short batches
 * and replaces it in one short transaction; the replaced build is dropped a little later.
 * Two versions running side by side (a rolling deploy) write different schemas, and an
 * older version never takes the views back from a newer one.
 */
export class ReadModelBuilds {
  constructor(private readonly db: Database) {}

  async list(projection?: string): Promise<Build[]> {
    const { rows } = await this.db.query<BuildRow>(
      `SELECT id, projection, version, schema_name, state FROM projection_builds
        WHERE $1::text IS NULL OR projection = $1 ORDER BY projection, created_at`,
      [projection ?? null],
    );
    return rows.map(toBuild);
  }

  /**
   * At start: gives the projection a build of its version, live or on its way. With nothing
   * to serve yet (a new database, a new projection) the build serves at once while it
   * catches up; otherwise the live build (or the tables from before builds existed) keeps
   * serving until the new one has caught up.
   */
  async prepare(projection: Projection): Promise<void> {
    await this.locked(projection, async (tx, builds) => {
      const live = builds.find((b) => b.state === 'live');
      if (live && live.version > projection.version) return; // a newer deploy serves it
      if (live && live.version === projection.version) {
        await this.createTables(tx, live, projection);
        return;
      }
      const build = builds.find((b) => b.state === 'building' && b.version === projection.version) ?? (await this.create(tx, projection));
      if (!live && !(await this.hasLegacyTables(tx, projection))) await this.goLive(tx, projection, build);
    });
  }

  /** At start: prepare() for each projection the service keeps. */
  async prepareAll(projections: readonly Projection[]): Promise<void> {
    for (const projection of projections) await this.prepare(projection);
  }

  /** `svc projections rebuild`: a fresh build of the current version (or the one already on its way). */
  async requestRebuild(projection: Projection): Promise<Build> {
    return this.locked(projection, async (tx, builds) => {
      const building = builds.find((b) => b.state === 'building' && b.version === projection.version);
      return building ?? this.create(tx, projection);
    });
  }

  /** Fresh planner statistics for a build's tables, before it serves: a bulk-built table has none. */
  async analyze(projection: Projection, build: Build): Promise<void> {
    for (const table of projection.tables) await this.db.exec(`ANALYZE ${ident(build.schema)}.${ident(table)}`);
  }

  /**
   * A building build that has caught up takes over the views: 'live'. Unless a newer
   * version serves already: 'retired'. Or unless the live build has applied events this
   * one has read yet (`readTo`, the build's consumer's position): 'behind', try again when it
   * reaches the end of the log next. A reader that waited for the live build to pass an
   * event must find that event after the switch too, so the live build's checkpoint row is
   * locked while the positions are compared and the views move.
   */
  async promote(projection: Projection, buildId: string, readTo: string): Promise<'live' | 'retired' | 'behind'> {
    try {
      return await this.locked(projection, async (tx, builds) => {
        const build = builds.find((b) => b.id === buildId);
        if (!build || build.state !== 'building') return 'retired';
        const live = builds.find((b) => b.state === 'live');
        if (live && live.version > build.version) {
          await tx.query(`UPDATE projection_builds SET state = 'retired', retired_at = now() WHERE id = $1`, [build.id]);
          return 'retired';
        }
        if (live) {
          // A live batch commits in a moment; do not queue every reader of the views behind it.
          await tx.query(`SET LOCAL lock_timeout = '2s'`);
          const { rows } = await tx.query<{ position: string }>('SELECT position FROM projection_checkpoints WHERE name = $1 FOR UPDATE', [live.id]);
          if (rows[0] && readTo < rows[0].position) return 'behind';
        }
        await this.goLive(tx, projection, build);
        return 'live';
      });
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') return 'behind'; // lock_timeout
      throw error;
    }
  }

  /** Drops the schemas of builds retired longer ago than graceMs, with their bookkeeping. */
  async dropRetired(graceMs: number): Promise<string[]> {
    const { rows } = await this.db.query<BuildRow>(
      `SELECT id, projection, version, schema_name, state FROM projection_builds
        WHERE state = 'retired' AND retired_at < now() - $1 * interval '1 millisecond'`,
      [graceMs],
    );
    const dropped: string[] = [];
    for (const build of rows.map(toBuild)) {
      try {
        await this.db.transaction(async (tx) => {
          // A reader still inside an old table must not make every later query wait behind us.
          await tx.query(`SET LOCAL lock_timeout = '2s'`);
          await tx.exec(`DROP SCHEMA IF EXISTS ${ident(build.schema)} CASCADE`);
          await tx.query('DELETE FROM parked_events WHERE consumer = $1', [build.id]);
          await tx.query('DELETE FROM consumer_leases WHERE name = $1', [build.id]);
          await tx.query('DELETE FROM projection_checkpoints WHERE name = $1', [build.id]);
          await tx.query('DELETE FROM projection_builds WHERE id = $1', [build.id]);
        });
        dropped.push(build.id);
      } catch {
        // Busy (lock_timeout): the next round tries again.
      }
    }
    return dropped;
  }

  /** Runs fn with the build's tables first on the search path (until tx ends). */
  async withSchema<T>(tx: Queryable, build: Build, fn: () => Promise<T>): Promise<T> {
    await readFromSchema(tx, build.schema);
    return fn();
  }

  private async locked<T>(projection: Projection, fn: (tx: Queryable, builds: Build[]) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`projection:${projection.name}`]);
      const { rows } = await tx.query<BuildRow>(
        'SELECT id, projection, version, schema_name, state FROM projection_builds WHERE projection = $1 ORDER BY created_at',
        [projection.name],
      );
      return fn(tx, rows.map(toBuild));
    });
  }

  private async create(tx: Queryable, projection: Projection): Promise<Build> {
    const base = `${projection.name}:v${projection.version}`;
    const { rows } = await tx.query<{ n: string; taken: boolean }>(
      `SELECT nextval('projection_build_seq') AS n, EXISTS (SELECT 1 FROM projection_builds WHERE id = $1) AS taken`,
      [base],
    );
    const suffix = rows[0].taken ? `.${rows[0].n}` : '';
    const build: Build = {
      id: base + suffix,
      projection: projection.name,
      version: projection.version,
      schema: `rm_${projection.name}_v${projection.version}${suffix.replace('.', '_')}`,
      state: 'building',
    };
    await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${ident(build.schema)}`);
    await this.createTables(tx, build, projection);
    await tx.query(
      `INSERT INTO projection_builds (id, projection, version, schema_name, state) VALUES ($1, $2, $3, $4, 'building')`,
      [build.id, build.projection, build.version, build.schema],
    );
    await ensureCheckpoint(tx, build.id, build.version);
    return build;
  }

  private createTables(tx: Queryable, build: Build, projection: Projection): Promise<void> {
    return this.withSchema(tx, build, () => tx.exec(projection.schema));
  }

  /** Points the views at the build, in the caller's (short) transaction. */
  private async goLive(tx: Queryable, projection: Projection, build: Build): Promise<void> {
    await tx.query(`UPDATE projection_builds SET state = 'retired', retired_at = now() WHERE projection = $1 AND state = 'live'`, [projection.name]);
    await tx.query(`UPDATE projection_builds SET state = 'live', live_at = now() WHERE id = $1`, [build.id]);
    for (const table of projection.tables) {
      const kind = await this.publicRelationKind(tx, table);
      // 'r': the table this read model had before builds existed.
      if (kind === 'v') await tx.exec(`DROP VIEW public.${ident(table)}`);
      else if (kind === 'r') await tx.exec(`DROP TABLE public.${ident(table)} CASCADE`);
      await tx.exec(`CREATE VIEW public.${ident(table)} AS SELECT * FROM ${ident(build.schema)}.${ident(table)}`);
    }
    // The checkpoint of the read model from before builds existed.
    await tx.query('DELETE FROM projection_checkpoints WHERE name = $1', [projection.name]);
    build.state = 'live';
  }

  private async hasLegacyTables(tx: Queryable, projection: Projection): Promise<boolean> {
    for (const table of projection.tables) if ((await this.publicRelationKind(tx, table)) === 'r') return true;
    return false;
  }

  private async publicRelationKind(tx: Queryable, table: string): Promise<string | undefined> {
    const { rows } = await tx.query<{ relkind: string }>(
      `SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = $1`,
      [table],
    );
    return rows[0]?.relkind;
  }
}
