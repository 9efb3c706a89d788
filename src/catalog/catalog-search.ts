/**
 * Full-text search over catalog_listings without ranking every match. Ranking reads each
 * match's tsvector, so a common word (15k matches on 100k listings) cost seconds under load.
 * Instead only the newest `candidates` (200) matches (a cheap order the btree or a bitmap of the
 * GIN index gives) are ranked, and the pages walk one fixed total order of all matches:
 *
 *   1. the candidate window, by (ts_rank DESC, id DESC);
 *   2. every older match (the tail), by (published_at DESC, id DESC).
 *
 * Anything older than the window's oldest row is outside it, so the two parts never overlap,
 * and a cursor walk returns every match exactly once. The tail is read only when a page
 * runs past the window.
 */

/** How many of the newest matches are ranked; past them the order is recency. */
export const SEARCH_CANDIDATES = 200;

export interface SearchSql {
  /** Filters on catalog_listings (no alias), without the text match. */
  where: string[];
  /** Bind values so far; the statements append theirs. */
  values: unknown[];
  /** The websearch text. */
  q: string;
  cursor?: string;
  candidates: number;
}

function bind(values: unknown[], value: unknown): string {
  values.push(value);
  return `$${values.length}`;
}

/** The newest candidates, as a CTE. `withRank` ranks them (only the window page needs it). */
function candidatesCte(s: SearchSql, values: unknown[], withRank: boolean): string {
  const q = bind(values, s.q);
  const n = bind(values, s.candidates);
  return `tsq AS (SELECT websearch_to_tsquery('english', ${q}) AS query),
    cand AS MATERIALIZED (
      SELECT id, published_at${withRank ? ', ts_rank(search, query) AS rank' : ''}
      FROM catalog_listings, tsq
      WHERE ${[...s.where, 'search @@ query'].join(' AND ')}
      ORDER BY published_at DESC, id DESC LIMIT ${n})`;
}

/** Page of the window after the cursor (or from its start), ranked; window_size < candidates means no tail. */
export function windowStatement(s: SearchSql, limit: number): { text: string; values: unknown[] } {
  const values = [...s.values];
  const after = s.cursor ? `WHERE (rank, id) < (SELECT rank, id FROM cand WHERE id = ${bind(values, s.cursor)})` : '';
  // The page is cut from the candidates before the join, so only its rows' state is read.
  return {
    text: `WITH ${candidatesCte(s, values, true)},
      page AS (SELECT id, rank FROM cand ${after} ORDER BY rank DESC, id DESC LIMIT ${bind(values, limit)})
      SELECT l.id, l.state - 'preview_sample' AS state, (SELECT count(*) FROM cand)::int AS window_size
      FROM page p JOIN catalog_listings l ON l.id = p.id
      ORDER BY p.rank DESC, p.id DESC`,
    values,
  };
}

/**
 * Page of the tail: matches older than the window's oldest, newest first; after the cursor
 * when the cursor itself lies in the tail (a cursor inside the window starts the tail at its top).
 */
export function tailStatement(s: SearchSql, limit: number): { text: string; values: unknown[] } {
  const values = [...s.values];
  const cte = candidatesCte(s, values, false);
  let after = '';
  if (s.cursor) {
    const cursor = bind(values, s.cursor);
    after = `AND (EXISTS (SELECT 1 FROM cand WHERE id = ${cursor})
      OR (published_at, id) < (SELECT c.published_at, c.id FROM catalog_listings c WHERE c.id = ${cursor}))`;
  }
  return {
    text: `WITH ${cte},
      oldest AS (SELECT published_at, id FROM cand ORDER BY published_at ASC, id ASC LIMIT 1)
      SELECT id, state - 'preview_sample' AS state FROM catalog_listings, tsq
      WHERE ${[...s.where, 'search @@ query'].join(' AND ')}
        AND (published_at, id) < (SELECT published_at, id FROM oldest) ${after}
      ORDER BY published_at DESC, id DESC LIMIT ${bind(values, limit)}`,
    values,
  };
}
