/**
 * Lists as async iterables: `for await (const model of client.models.list()) ...` walks every
 * page (the API's envelope: `items`, `next_cursor`, `has_more`; the next page is asked for
 * with `cursor=<next_cursor>`, the filters sent again with every page).
 */
import type { Query } from './http';

export interface PageBody<T> {
  items: T[];
  next_cursor?: string | null;
  has_more?: boolean;
  [extra: string]: unknown;
}

export class Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
  readonly hasMore: boolean;
  /** The whole answer, with any field beside the items (a ledger's `summary`, say). */
  constructor(readonly body: PageBody<T>) {
    this.items = Array.isArray(body.items) ? body.items : [];
    this.nextCursor = body.next_cursor ?? null;
    this.hasMore = Boolean(body.has_more);
  }
}

/**
 * Pages asked for lazily, as the iteration reaches them. Iterating twice asks again from the
 * first page. `firstPage()` and `pages()` for callers that want the envelope; `toArray()`
 * collects everything.
 */
export class ListIterator<T> implements AsyncIterable<T> {
  private readonly params: Query;

  constructor(
    private readonly fetchPage: (query: Query) => Promise<PageBody<T>>,
    params: Query = {},
  ) {
    this.params = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined && v !== null));
  }

  async firstPage(): Promise<Page<T>> {
    return new Page(await this.fetchPage(this.params));
  }

  async *pages(): AsyncGenerator<Page<T>> {
    let page = await this.firstPage();
    for (;;) {
      yield page;
      if (!page.hasMore || !page.nextCursor) return;
      page = new Page(await this.fetchPage({ ...this.params, cursor: page.nextCursor }));
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.items;
  }

  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
