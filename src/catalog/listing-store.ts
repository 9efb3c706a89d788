import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, ExpectedRevision, NewEvent } from '../event-store/event-store';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { evolve, fold, ListingState } from './listing';

export interface LoadedListing {
  state: ListingState;
  revision: number;
}

/** Loads a listing stream and appends to it at the revision it was loaded at. */
@Injectable()
export class ListingStore {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  async load(mode: Mode, listingId: string): Promise<LoadedListing> {
    const events = await this.store.readStream(Streams.listing(mode, listingId));
    const state = fold(events);
    if (!state) throw Errors.notFound('listing');
    return { state, revision: events[events.length - 1].revision };
  }

  /** Appends and returns the state after the new events. */
  async append(state: ListingState | undefined, mode: Mode, listingId: string, events: NewEvent[], expected: ExpectedRevision): Promise<ListingState> {
    await this.writer.append(Streams.listing(mode, listingId), events, expected);
    return events.reduce<ListingState | undefined>((s, e) => evolve(s, e), state)!;
  }

  /**
   * A listing by id or slug in one mode, from its streams (the slug's claim names the id);
   * undefined when there is none. For commands that must not decide on the read model.
   */
  async resolve(mode: Mode, idOrSlug: string): Promise<ListingState | undefined> {
    const byId = fold(await this.store.readStream(Streams.listing(mode, idOrSlug)));
    if (byId) return byId;
    const [claim] = await this.store.readStream(Streams.listingSlug(mode, idOrSlug));
    const listingId = (claim?.data as { listing_id?: string } | undefined)?.listing_id;
    return listingId ? fold(await this.store.readStream(Streams.listing(mode, listingId))) : undefined;
  }

  retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
    return this.writer.retryOnConflict(attempt);
  }
}
