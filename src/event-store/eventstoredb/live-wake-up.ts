import { END, type Filter, type KurrentDBClient } from '@kurrent/kurrentdb-client';

/** Pause before the live subscription is opened again after it dropped. */
const RESUBSCRIBE_MS = 500;

type StreamSubscription = ReturnType<KurrentDBClient['subscribeToAll']>;

export interface Wait {
  done: Promise<void>;
  cancel: () => void;
}

/**
 * Tells caught-up readers that the log moved: one live subscription to $all (from its
 * end, with the application's filter) per process, opened when first needed and opened
 * again whenever it drops. It carries no events to consumers, only the news, so what a
 * consumer applies always comes from its own checkpointed reads.
 */
export class LiveWakeUp {
  /** Bumped on every wake-up, so a reader can tell that one raced its empty read. */
  seq = 0;
  private readonly wakers = new Set<() => void>();
  private subscription: StreamSubscription | null = null;
  private resubscribeTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly client: KurrentDBClient, private readonly filter: Filter) {}

  wake(): void {
    this.seq++;
    for (const waker of [...this.wakers]) waker();
  }

  /** Resolves at the next wake-up, or after maxMs (the fallback should the subscription be down). */
  next(maxMs: number): Wait {
    this.ensureSubscribed();
    return this.sleep(maxMs);
  }

  /** Resolves after ms, or sooner when cancelled (a subscription stopping). */
  sleep(ms: number, wakeable = true): Wait {
    let cancel!: () => void;
    const done = new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wakers.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      if (wakeable) this.wakers.add(finish);
      cancel = finish;
    });
    return { done, cancel };
  }

  private ensureSubscribed(): void {
    if (this.subscription || this.resubscribeTimer || this.closed) return;
    const subscription = this.client.subscribeToAll({ fromPosition: END, filter: this.filter });
    this.subscription = subscription;
    const dropped = () => {
      if (this.subscription !== subscription) return;
      this.subscription = null;
      // Anything appended while it was down is found by the readers' next read.
      this.wake();
      if (this.closed) return;
      this.resubscribeTimer = setTimeout(() => {
        this.resubscribeTimer = null;
        if (this.wakers.size > 0) this.ensureSubscribed();
      }, RESUBSCRIBE_MS);
    };
    subscription.on('data', () => this.wake());
    subscription.on('error', dropped);
    subscription.on('end', dropped);
    subscription.on('close', dropped);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.resubscribeTimer) clearTimeout(this.resubscribeTimer);
    const subscription = this.subscription;
    this.subscription = null;
    this.wake();
    await subscription?.unsubscribe().catch(() => undefined);
  }
}
