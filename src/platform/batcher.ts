import { outsideRequestContext } from './request-context';

/**
 * Gathers items handed in one at a time into batches, each written by one call: what arrives
 * in the same turn of the event loop, or while the writes in flight run, shares a write. A
 * failed batch is written again item by item, so an item the write refuses fails alone and
 * does not take the others with it. Each add() settles with its own item's write.
 */
export class Batcher<T> {
  private pending: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;
  private writing = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly maxBatch: number,
    /** Writes in flight at once. */
    private readonly maxWrites = 1,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing >= this.maxWrites || !this.pending.length) return;
    this.scheduled = true;
    // One write holds many requests' items: it runs in none of theirs (no one request's actor on it).
    outsideRequestContext(() =>
      setImmediate(() => {
        this.scheduled = false;
        void this.flush();
      }),
    );
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.maxBatch);
    if (!batch.length) return;
    this.writing++;
    this.schedule();
    try {
      await this.write(batch.map((b) => b.item));
      for (const b of batch) b.resolve();
    } catch (error) {
      if (batch.length === 1) batch[0].reject(error);
      else for (const b of batch) await this.write([b.item]).then(b.resolve, b.reject);
    } finally {
      this.writing--;
      this.schedule();
    }
  }
}
