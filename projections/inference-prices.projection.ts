import type { InferencePriceSet } from '../src/inference/events';
import type { Projection } from '../src/projection-runner/projection';

/** inference_prices: each model's price in force (the catalog's default until one is set). */
export const inferencePricesProjection: Projection = {
  name: 'inference_prices',
  version: 1,
  tables: ['inference_prices'],
  schema: `
    CREATE TABLE IF NOT EXISTS inference_prices (
      model                  text PRIMARY KEY,
      input_usd_per_million  numeric NOT NULL,
      output_usd_per_million numeric NOT NULL,
      set_at                 timestamptz NOT NULL
    );`,
  handles: ['InferencePriceSet'],
  whenFailing: 'stop', // money: calls are charged at these prices
  async apply(tx, event) {
    const e = event.data as InferencePriceSet;
    await tx.query(
      `INSERT INTO inference_prices (model, input_usd_per_million, output_usd_per_million, set_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (model) DO UPDATE SET input_usd_per_million = EXCLUDED.input_usd_per_million,
         output_usd_per_million = EXCLUDED.output_usd_per_million, set_at = EXCLUDED.set_at`,
      [e.model, e.input_usd_per_million, e.output_usd_per_million, e.set_at],
    );
  },
};
