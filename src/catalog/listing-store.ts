import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, ExpectedRevision, NewEvent } from '../event-store/event-store';
import { Errors } from '../platform/errors';
import { KeptStates } from '../platform/kept-states';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { CatalogEvents, ListingKind, ListingSlugClaimed } from './events';
import { evolve, ListingState } from './listing';

export interface LoadedListing {
  state: ListingState;
  revision: number;
}

/** Listings whose folded state this process keeps between commands (each its fields, description included). */
export const KEPT_LISTINGS = 5000;

/**
 * Loads a listing stream and appends to it at the revision it was loaded at. Commands
 * find listings here, from the streams, never from catalog_listings: a lagging projection
 * must not turn a listing just drafted into a 404 (issue 9).
 *
 * Every download appends to its listing's stream, so a popular listing's stream grows for
 * ever: the folded state is kept and each load reads only the events after it. States are
 * never changed in place (evolve returns a new one), so loads may run side by side.
 */
@Injectable()
export class ListingStore {
  private readonly kept = new KeptStates<ListingState>(KEPT_LISTINGS);

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  async load(mode: Mode, listingId: string): Promise<LoadedListing> {
    const loaded = await this.loadById(mode, listingId);
    if (!loaded) throw Errors.notFound('listing');
    return loaded;
  }

  /**
   * The listing an id or a slug names in this mode, of this kind when given. A slug is
   * resolved through its claim stream, and then only if the claimed listing was drafted
   * with that slug: a claim left behind by a failed draft names nothing.
   */
  async find(mode: Mode, idOrSlug: string, kind?: ListingKind): Promise<LoadedListing | undefined> {
    let loaded = await this.loadById(mode, idOrSlug);
    if (!loaded) {
      const claim = (await this.store.readStream(Streams.listingSlug(mode, idOrSlug)))[0];
      if (claim?.type !== CatalogEvents.ListingSlugClaimed) return undefined;
      loaded = await this.loadById(mode, (claim.data as ListingSlugClaimed).listing_id);
      if (loaded?.state.slug !== idOrSlug) return undefined;
    }
    return !kind || loaded.state.kind === kind ? loaded : undefined;
  }

  /** One of the caller's own listings in any state; another account's is 404 like a missing one, never 403. */
  async loadOwn(mode: Mode, accountId: string, idOrSlug: string, kind?: ListingKind): Promise<LoadedListing> {
    const loaded = await this.find(mode, idOrSlug, kind);
    if (loaded?.state.account_id !== accountId) throw Errors.notFound('listing');
    return loaded;
  }

  /** A published listing (what a buyer may check out). */
  async findPublished(mode: Mode, idOrSlug: string, kind?: ListingKind): Promise<LoadedListing | undefined> {
    const loaded = await this.find(mode, idOrSlug, kind);
    return loaded?.state.status === 'published' ? loaded : undefined;
  }

  /** Appends and returns the state after the new events. */
  async append(state: ListingState | undefined, mode: Mode, listingId: string, events: NewEvent[], expected: ExpectedRevision): Promise<ListingState> {
    await this.writer.append(Streams.listing(mode, listingId), events, expected);
    return events.reduce<ListingState | undefined>((s, e) => evolve(s, e), state)!;
  }

  retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
    return this.writer.retryOnConflict(attempt);
  }

  private async loadById(mode: Mode, listingId: string): Promise<LoadedListing | undefined> {
    const stream = Streams.listing(mode, listingId);
    const kept = this.kept.get(stream);
    const since = await this.store.readStream(stream, { fromRevision: kept ? kept.revision + 1 : 0 });
    const state = since.reduce((s, event) => evolve(s, event), kept?.state);
    if (!state) return undefined;
    const loaded = since.length ? { state, revision: since[since.length - 1].revision } : kept!;
    // A load that ran beside this one may have kept a later revision already.
    if (loaded.revision >= (this.kept.get(stream)?.revision ?? -1)) this.kept.keep(stream, loaded);
    return loaded;
  }
}
