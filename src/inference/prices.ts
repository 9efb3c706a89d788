import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, Position } from '../event-store/event-store';
import { FollowedEvent, LogFollower } from '../event-store/log-follower';
import { InferenceEvents, InferencePriceSet } from './events';
import { INFERENCE_MODELS, InferenceModel, Price } from './model-catalog';

/** GET /v1/inference/models item (decisions section 8). */
export interface ModelListing {
  id: string;
  object: 'model';
  /** Unix seconds, as OpenAI's model object has it. */
  created: number;
  owned_by: string;
  context_window: number;
  pricing: Price;
}

export function toModelListing(model: InferenceModel, pricing: Price): ModelListing {
  return { id: model.id, object: 'model', created: model.created, owned_by: 'svc', context_window: model.contextWindow, pricing };
}

/**
 * Prices in force, from the inference_prices read model; a model never priced costs its
 * catalog default. Kept in this process (issue 27) so that a call reads no price: the
 * prices read once, then every InferencePriceSet laid over them as it reaches this process
 * (its own at once, other instances' through the log), the latest by log position winning.
 * The prices the log set are kept beside the copy and laid over any later read too, so a
 * read racing a read model still catching up cannot bring an old price back. Read again
 * when the log has not confirmed the copy for AUTH_CACHE_MAX_AGE.
 */
@Injectable()
export class InferencePrices implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private kept?: { prices: Map<string, Price>; readAt: number };
  private readonly told = new Map<string, { price: Price; position: Position }>();
  private readonly follower: LogFollower;
  private readonly maxAgeMs: number;

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.maxAgeMs = settings.authCache.maxAgeSeconds * 1000;
    this.follower = new LogFollower(store, [InferenceEvents.InferencePriceSet], (event) => this.learn(event));
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.maxAgeMs > 0) await this.follower.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.follower.stop();
  }

  async list(): Promise<ModelListing[]> {
    const set = await this.prices();
    return INFERENCE_MODELS.map((m) => toModelListing(m, set.get(m.id) ?? m.defaultPrice));
  }

  async priceOf(model: InferenceModel): Promise<Price> {
    return (await this.prices()).get(model.id) ?? model.defaultPrice;
  }

  private async prices(): Promise<Map<string, Price>> {
    const kept = this.kept;
    if (kept && this.follower.confirms(kept.readAt, this.maxAgeMs)) return kept.prices;
    const readAt = Date.now();
    const prices = await this.read();
    for (const [model, { price }] of this.told) prices.set(model, price);
    if (this.maxAgeMs > 0) this.kept = { prices, readAt };
    return prices;
  }

  private learn(event: FollowedEvent): void {
    const { model, set_at: _at, ...price } = event.data as InferencePriceSet;
    const known = this.told.get(model);
    // Within one append, later events carry the same position and come later: they win.
    if (known && known.position > event.position) return;
    this.told.set(model, { price, position: event.position });
    this.kept?.prices.set(model, price);
  }

  private async read(): Promise<Map<string, Price>> {
    const { rows } = await this.db.query<{ model: string; input: string; output: string }>(
      `SELECT model, input_usd_per_million::text AS input, output_usd_per_million::text AS output FROM inference_prices`,
    );
    return new Map(rows.map((r) => [r.model, { input_usd_per_million: Number(r.input), output_usd_per_million: Number(r.output) }]));
  }
}
