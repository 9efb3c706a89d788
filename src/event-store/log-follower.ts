import { EventStore, Position, Subscription } from './event-store';

/**
 * One fact a follower was told of, from the log or from an append of this process: its
 * type, data and position (for an event of this process's append, the position of the
 * append's last event). Positions let a follower keep the latest of facts that arrived
 * out of order by the two paths.
 */
export interface FollowedEvent {
  type: string;
  data: any;
  position: Position;
}

/** How soon a follower that could not find the log's head tries again. */
const RETRY_MS = 1000;

/**
 * Tells an in-process copy of read-model rows (the auth guard's keys, the prices) of the
 * events that change them, so that the copy is dropped or updated without a query per
 * request. Two paths, both needed:
 * - this process's own appends, at once (onAppended): a command's caller sees its write;
 * - every instance's appends, through a subscription to the log from its head, on the
 *   same wake-up path the projections use (LISTEN/NOTIFY on Postgres, the live
 *   subscription on EventStoreDB).
 * An event may so arrive twice: what a follower does with one must be idempotent.
 *
 * Each time the subscription reaches the end of the log, no event it was owed is missing: a
 * copy read before that moment is current to it (confirms()); one not confirmed for its
 * maximum age must be read again (a subscription that cannot read the log
 * stops confirming, and copies fall back to a read per max age).
 */
export class LogFollower {
  private subscription?: Subscription;
  private retry?: NodeJS.Timeout;
  private stopLocal?: () => void;
  private confirmed = 0;

  constructor(
    private readonly store: EventStore,
    private readonly types: readonly string[],
    private readonly onEvent: (event: FollowedEvent) => void,
  ) {}

  /** Whether a copy read at readAt is still current: the log (or the read itself) confirmed it within maxAgeMs. */
  confirms(readAt: number, maxAgeMs: number): boolean {
    return Date.now() - Math.max(readAt, this.confirmed) < maxAgeMs;
  }

  /**
   * Starts following. Never fails: while the log cannot be read (the event store down at
   * boot), it tries again each second, and copies meanwhile live by their max age.
   */
  async start(): Promise<void> {
    if (this.stopLocal) return;
    this.stopLocal = this.store.onAppended((_stream, events, appended) => {
      for (const event of events) if (this.types.includes(event.type)) this.onEvent({ type: event.type, data: event.data, position: appended.position });
    });
    await this.subscribe();
  }

  private async subscribe(): Promise<void> {
    let head: Position;
    try {
      // From the head: what came before is in the read models any copy is read from.
      head = await this.store.headPosition();
    } catch {
      this.retry = setTimeout(() => void this.subscribe(), RETRY_MS).unref();
      return;
    }
    if (!this.stopLocal) return;
    this.subscription = this.store.subscribeToAll(
      head,
      async (events) => {
        for (const event of events) this.onEvent(event);
      },
      {
        types: this.types,
        onCaughtUp: async () => {
          this.confirmed = Date.now();
        },
        onError: () => {
          // The subscription retries by itself; copies stop being confirmed meanwhile.
        },
      },
    );
  }

  async stop(): Promise<void> {
    clearTimeout(this.retry);
    this.stopLocal?.();
    this.stopLocal = undefined;
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.stop();
  }
}
