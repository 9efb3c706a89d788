import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { INFERENCE_MODELS, InferenceModel, Price } from './model-catalog';

/** GET /v1/inference/models item (decisions section 8). */
export interface ModelListing {
  id: string;
  object: 'model';
  owned_by: string;
  context_window: number;
  pricing: Price;
}

export function toModelListing(model: InferenceModel, pricing: Price): ModelListing {
  return { id: model.id, object: 'model', owned_by: 'svc', context_window: model.contextWindow, pricing };
}

/** Prices in force, from the inference_prices read model; a model never priced costs its catalog default. */
@Injectable()
export class InferencePrices {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async list(): Promise<ModelListing[]> {
    const set = await this.read();
    return INFERENCE_MODELS.map((m) => toModelListing(m, set.get(m.id) ?? m.defaultPrice));
  }

  async priceOf(model: InferenceModel): Promise<Price> {
    return (await this.read(model.id)).get(model.id) ?? model.defaultPrice;
  }

  private async read(model?: string): Promise<Map<string, Price>> {
    const { rows } = await this.db.query<{ model: string; input: string; output: string }>(
      `SELECT model, input_usd_per_million::text AS input, output_usd_per_million::text AS output
         FROM inference_prices WHERE $1::text IS NULL OR model = $1`,
      [model ?? null],
    );
    return new Map(rows.map((r) => [r.model, { input_usd_per_million: Number(r.input), output_usd_per_million: Number(r.output) }]));
  }
}
