import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, Position } from '../event-store/event-store';
import type { Handled, StreamCommands } from '../event-store/stream-commands';
import { Errors } from '../platform/errors';
import { KeptStates } from '../platform/kept-states';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { CatalogEvents, ListingKind, ListingSlugClaimed } from './events';
import { ListingCommand, listingDecider, ListingEvent, ListingState, ListingStreamState } from './listing.decider';

export interface LoadedListing {
  state: ListingState;
  revision: number;
  position: Position | null;
}

/** Listings whose folded state this process keeps between commands (each its fields, description included). */
export const KEPT_LISTINGS = 5000;

/**
 * Finds listings on their streams and runs the listing decider on them. Commands find
 * listings here, from the streams, never from catalog_listings: a lagging projection must
 * not turn a listing just drafted into a 404 (issue 9).
 *
 * Every download appends to its listing's stream, so a popular listing's stream grows for
 * ever: the folded state is kept and each load reads only the events after it. States are
 * never changed in place (evolve returns a new one), so loads may run side by side.
 */
@Injectable()
export class ListingStore {
  /** The decider's runner: load, decide, append at the loaded revision (waiting for the read models), retry a lost race. */
  readonly commands: StreamCommands<ListingCommand, ListingEvent, ListingStreamState>;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    writer: EventWriter,
  ) {
    this.commands = writer.commands(listingDecider, { kept: new KeptStates<ListingStreamState>(KEPT_LISTINGS) });
  }

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

  /**
   * Decides a command on one of the caller's own listings, named by id or slug (404 for
   * another account's, as loadOwn). The name is resolved once: a listing's id, slug, kind
   * and account never change, so a retry decides on the same stream.
   */
  async handleOwn(
    mode: Mode,
    accountId: string,
    idOrSlug: string,
    kind: ListingKind | undefined,
    command: (state: ListingStreamState) => ListingCommand | Promise<ListingCommand>,
  ): Promise<ListingState> {
    const own = await this.loadOwn(mode, accountId, idOrSlug, kind);
    const handled = await this.commands.handle(Streams.listing(mode, own.state.id), command, own);
    return handled.state!;
  }

  /** Decides a command on the listing stream of this id (a draft creates it). */
  handle(mode: Mode, listingId: string, command: ListingCommand): Promise<Handled<ListingStreamState, ListingEvent>> {
    return this.commands.handle(Streams.listing(mode, listingId), command);
  }

  private async loadById(mode: Mode, listingId: string): Promise<LoadedListing | undefined> {
    const { state, revision, position } = await this.commands.load(Streams.listing(mode, listingId));
    return state && { state, revision, position };
  }
}
