import { asUnavailable, isUnanswered } from './recorded';

/** First pause before a call the server did not answer is made again; doubles up to the max. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 1000;

/**
 * Makes a call again while the server gives no outcome (a node restarting or not ready,
 * busy, not the leader, a timeout, the client's channel still in its reconnect backoff),
 * for up to retryMs; then says the store is unavailable (a 503). Safe for every call the
 * adapter makes: reads have no effect, and an append carries fixed event ids, which the
 * server recognises durably at an exact expected revision; at any/stream_exists it
 * remembers them only in memory until a restart or failover, so the adapter's append reads
 * the stream's end back before such a retry (EventStoreDbEventStore.append).
 */
export async function rideOut<T>(what: string, retryMs: number, call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + retryMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      return await call();
    } catch (error) {
      if (!isUnanswered(error) || Date.now() + pause > deadline) throw asUnavailable(error, what);
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
