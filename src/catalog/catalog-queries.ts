import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { CreatedBound, createdSql } from '../platform/created-range';
import type { Mode } from '../platform/mode';
import { inMode, Owner, ownedBy, Scope } from '../platform/owner-scope';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import type { ListingKind } from './events';
import { ListingState, ListingStatus } from './listing';
import { SEARCH_CANDIDATES, SearchSql, tailStatement, windowStatement } from './catalog-search';

export interface PublicListQuery {
  mode: Mode;
  kind: ListingKind;
  q?: string;
  type?: string;
  category?: string;
  framework?: string;
  hardware?: string;
  sensor?: string;
  ros_compatible?: boolean;
  jetson_compatible?: boolean;
  isaac_sim_compatible?: boolean;
  created?: readonly CreatedBound[];
  cursor?: string;
  limit: number;
}

/** What findHead reads: enough to decide reachability and whether a kept preview is current. */
export interface ListingHead {
  id: string;
  mode: Mode;
  account_id: string;
  status: ListingStatus;
  revision: number;
  price: number;
}

export interface OwnListQuery {
  status?: ListingStatus;
  created?: readonly CreatedBound[];
  cursor?: string;
  limit: number;
}

/** `(id = $n OR slug = $n)`, and of one kind when given. */
function idOrSlugIs(s: Scope, idOrSlug: string, kind?: ListingKind): string {
  const p = s.param(idOrSlug);
  return `(id = ${p} OR slug = ${p})${kind ? ` AND kind = ${s.param(kind)}` : ''}`;
}

/**
 * Reads of the catalog_listings read model. Every query is scoped to one mode; the public
 * ones see published rows only, the seller's ones only the caller's rows.
 */
@Injectable()
export class CatalogQueries {
  /** How many of the newest matches a search ranks; tests lower it to walk past the window. */
  candidates = SEARCH_CANDIDATES;

  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** A published listing in this mode, by id or slug; of one kind, or of either. */
  async findPublished(mode: Mode, kind: ListingKind | undefined, idOrSlug: string): Promise<ListingState | undefined> {
    const s = inMode(mode);
    return this.findOne(s, `status = 'published' AND ${idOrSlugIs(s, idOrSlug, kind)}`);
  }

  /** One of the caller's own listings in any state; another account's reads as absent. */
  async findOwn(owner: Owner, idOrSlug: string, kind?: ListingKind): Promise<ListingState | undefined> {
    const s = ownedBy(owner);
    return this.findOne(s, idOrSlugIs(s, idOrSlug, kind));
  }

  /** A listing of one kind in any state: the caller decides who may see it (Entitlements.isReachable). */
  async find(mode: Mode, kind: ListingKind, idOrSlug: string): Promise<ListingState | undefined> {
    const s = inMode(mode);
    return this.findOne(s, idOrSlugIs(s, idOrSlug, kind));
  }

  /**
   * Published listings, newest first, or by full-text rank over the newest matches when q is
   * given (catalog-search.ts). q goes
   * through websearch_to_tsquery, which accepts any text (quotes, operators, SQL or regex
   * characters) without a syntax error.
   */
  async listPublished(query: PublicListQuery): Promise<Page<ListingState>> {
    const s = inMode(query.mode);
    const where = [s.where(), `kind = ${s.param(query.kind)}`, `status = 'published'`];
    if (query.type) where.push(`type = ${s.param(query.type)}`);
    if (query.category) where.push(`category = ${s.param(query.category)}`);
    if (query.framework) where.push(`frameworks @> ${s.param(JSON.stringify([query.framework]))}::jsonb`);
    if (query.hardware) where.push(`hardware @> ${s.param(JSON.stringify([query.hardware]))}::jsonb`);
    if (query.sensor) where.push(`sensors @> ${s.param(JSON.stringify([query.sensor]))}::jsonb`);
    for (const flag of ['ros_compatible', 'jetson_compatible', 'isaac_sim_compatible'] as const) {
      if (query[flag] !== undefined) where.push(`${flag} = ${s.param(query[flag])}`);
    }
    where.push(...createdSql(query.created ?? [], 'created_at', (v) => s.param(v)));
    if (query.cursor) await this.assertCursor(query.mode, query.cursor);
    if (query.q !== undefined && query.q.trim() !== '') {
      return this.search({ where, values: s.params, q: query.q, cursor: query.cursor, candidates: this.candidates }, query.limit);
    }
    if (query.cursor) {
      where.push(`(published_at, id) < (SELECT c.published_at, c.id FROM catalog_listings c WHERE c.id = ${s.param(query.cursor)})`);
    }
    const { rows } = await this.db.query<{ id: string; state: ListingState }>(
      `SELECT id, state - 'preview_sample' AS state FROM catalog_listings WHERE ${where.join(' AND ')} ORDER BY published_at DESC, id DESC LIMIT ${s.param(query.limit + 1)}`,
      s.params,
    );
    return toPage(rows, query.limit, (r) => r.state);
  }

  /** Ranked window first; the tail only when this page runs past it (see catalog-search.ts). */
  private async search(s: SearchSql, limit: number): Promise<Page<ListingState>> {
    const window = windowStatement(s, limit + 1);
    const { rows } = await this.db.query<{ id: string; state: ListingState; window_size?: number }>(window.text, window.values);
    // A window that holds fewer than `candidates` rows holds every match: no tail to read.
    if (rows.length <= limit && !(rows.length && rows[0].window_size! < s.candidates)) {
      const tail = tailStatement(s, limit + 1 - rows.length);
      rows.push(...(await this.db.query<{ id: string; state: ListingState }>(tail.text, tail.values)).rows);
    }
    return toPage(rows, limit, (r) => r.state);
  }

  /** The seller's own listings of every kind and state, newest first. */
  async listOwn(owner: Owner, query: OwnListQuery): Promise<Page<ListingState>> {
    const s = ownedBy(owner);
    const where = [s.where()];
    if (query.status) where.push(`status = ${s.param(query.status)}`);
    where.push(...createdSql(query.created ?? [], 'created_at', (v) => s.param(v)));
    if (query.cursor) {
      await this.assertCursor(owner.mode, query.cursor);
      where.push(`(created_at, id) < (SELECT c.created_at, c.id FROM catalog_listings c WHERE c.id = ${s.param(query.cursor)})`);
    }
    const { rows } = await this.db.query<{ id: string; state: ListingState }>(
      `SELECT id, state - 'preview_sample' AS state FROM catalog_listings WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${s.param(query.limit + 1)}`,
      s.params,
    );
    return toPage(rows, query.limit, (r) => r.state);
  }

  /**
   * A dataset's preview cache key and who may see it, without reading its state (the files of a
   * 10,000-shard dataset): GET /v1/datasets/{id}/preview answers from a kept preview while the
   * row's revision is the one it was built at (decision 0072).
   */
  async findHead(mode: Mode, kind: ListingKind, idOrSlug: string): Promise<ListingHead | undefined> {
    const s = inMode(mode);
    const { rows } = await this.db.query<ListingHead>(
      `SELECT id, mode, account_id, status, revision, (state->'price'->>'amount')::bigint AS price FROM catalog_listings WHERE ${s.where()} AND ${idOrSlugIs(s, idOrSlug, kind)} LIMIT 1`,
      s.params,
    );
    return rows[0] && { ...rows[0], price: Number(rows[0].price) };
  }

  private async assertCursor(mode: Mode, cursor: string): Promise<void> {
    const s = inMode(mode);
    const { rows } = await this.db.query(`SELECT 1 FROM catalog_listings WHERE ${s.where()} AND id = ${s.param(cursor)}`, s.params);
    if (!rows.length) throw invalidCursor();
  }

  /** `filter` was built with `s`'s params. */
  private async findOne(s: Scope, filter: string): Promise<ListingState | undefined> {
    const { rows } = await this.db.query<{ state: ListingState }>(`SELECT state FROM catalog_listings WHERE ${s.where()} AND ${filter} LIMIT 1`, s.params);
    return rows[0]?.state;
  }
}
