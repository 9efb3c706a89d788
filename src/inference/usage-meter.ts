import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { EVENT_STORE, EventStore, Position, WrongExpectedRevisionError } from '../event-store/event-store';
import { Metrics } from '../metrics/metrics';
import type { Mode } from '../platform/mode';
import { outsideRequestContext } from '../platform/request-context';
import { Streams } from '../platform/streams';
import { InferenceCallMetered, InferenceEvents } from './events';

interface Waiting {
  call: InferenceCallMetered;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const ATTEMPTS = 5;
const RETRY_MS = 200;

/**
 * Makes metered calls durable with group commit: calls finishing while an append is in
 * flight go together in the next one (one stream per flush, see Streams.inferenceUsage), so
 * at high concurrency metering costs one append per batch, not per call. A caller's last
 * bytes wait for its call's append: a call that answered is never missing from usage.
 */
@Injectable()
export class UsageMeter implements OnApplicationShutdown {
  private readonly logger = new Logger('UsageMeter');
  private readonly queued = new Map<Mode, Waiting[]>();
  private readonly flushing = new Map<Mode, Promise<void>>();
  /** The newest metered position per "mode:account", for GET /v1/usage to read its own calls. */
  private readonly latest = new Map<string, Position>();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly metrics: Metrics,
  ) {}

  record(call: InferenceCallMetered): Promise<void> {
    return new Promise((resolve, reject) => {
      const queue = this.queued.get(call.mode) ?? [];
      queue.push({ call, resolve, reject });
      this.queued.set(call.mode, queue);
      if (!this.flushing.has(call.mode)) this.flush(call.mode);
    });
  }

  /** Position of this instance's newest metered call for the account, if any. */
  latestPosition(mode: Mode, accountId: string): Position | undefined {
    return this.latest.get(`${mode}:${accountId}`);
  }

  /** Calls still being recorded are stored before the process goes (a flush may start the next). */
  async onApplicationShutdown(): Promise<void> {
    while (this.flushing.size) await Promise.all([...this.flushing.values()]);
  }

  private count(call: InferenceCallMetered): void {
    const labels = { mode: call.mode, model: call.model };
    this.metrics.inferenceCalls.inc({ ...labels, finish: call.finish_reason });
    this.metrics.inferenceTokens.inc({ ...labels, kind: 'prompt' }, call.prompt_tokens);
    this.metrics.inferenceTokens.inc({ ...labels, kind: 'completion' }, call.completion_tokens);
  }

  private flush(mode: Mode): void {
    const batch = this.queued.get(mode) ?? [];
    this.queued.delete(mode);
    // One append holds many requests' calls: it carries none of their actors (each call names its key).
    const done = outsideRequestContext(() => this.appendWithRetries(mode, batch))
      .then((position) => {
        for (const { call } of batch) {
          this.latest.set(`${mode}:${call.account_id}`, position);
          this.count(call);
        }
        for (const w of batch) w.resolve();
      })
      .catch((error) => {
        this.logger.error(`could not record ${batch.length} metered calls: ${(error as Error).message}`);
        for (const w of batch) w.reject(error);
      })
      .finally(() => {
        this.flushing.delete(mode);
        if (this.queued.get(mode)?.length) this.flush(mode);
      });
    this.flushing.set(mode, done);
  }

  private async appendWithRetries(mode: Mode, batch: Waiting[]): Promise<Position> {
    const stream = Streams.inferenceUsage(mode, randomUUID());
    const events = batch.map(({ call }) => ({ id: call.call_id, type: InferenceEvents.InferenceCallMetered, data: { ...call } }));
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.store.append(stream, events, 'no_stream')).position;
      } catch (error) {
        // The stream exists: an earlier attempt whose answer was lost did commit this batch.
        if (error instanceof WrongExpectedRevisionError) return (await this.store.readStream(stream)).at(-1)!.position;
        if (attempt >= ATTEMPTS) throw error;
        await new Promise((r) => setTimeout(r, RETRY_MS * attempt));
      }
    }
  }
}
