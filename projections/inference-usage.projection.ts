import type { InferenceCallMetered } from '../src/inference/events';
import { usageDay } from '../src/inference/usage-totals';
import type { Projection } from '../src/projection-runner/projection';

/**
 * inference_usage_daily: metered calls summed per account, mode, UTC day and model, so a
 * usage window of up to 365 days reads at most 365 rows per model.
 */
export const inferenceUsageProjection: Projection = {
  name: 'inference_usage',
  version: 1,
  tables: ['inference_usage_daily'],
  schema: `
    CREATE TABLE IF NOT EXISTS inference_usage_daily (
      account_id        text NOT NULL,
      mode              text NOT NULL,
      day               date NOT NULL,
      model             text NOT NULL,
      calls             bigint NOT NULL,
      prompt_tokens     bigint NOT NULL,
      completion_tokens bigint NOT NULL,
      cost_micros       bigint NOT NULL,
      PRIMARY KEY (account_id, mode, day, model)
    );`,
  handles: ['InferenceCallMetered'],
  whenFailing: 'stop', // money: live usage is what an invoice bills
  async apply(tx, event) {
    const e = event.data as InferenceCallMetered;
    // Applied once per event per build (the checkpoint commits with it), so adding is exact.
    await tx.query(
      `INSERT INTO inference_usage_daily (account_id, mode, day, model, calls, prompt_tokens, completion_tokens, cost_micros)
       VALUES ($1, $2, $3, $4, 1, $5, $6, $7)
       ON CONFLICT (account_id, mode, day, model) DO UPDATE SET
         calls = inference_usage_daily.calls + 1,
         prompt_tokens = inference_usage_daily.prompt_tokens + EXCLUDED.prompt_tokens,
         completion_tokens = inference_usage_daily.completion_tokens + EXCLUDED.completion_tokens,
         cost_micros = inference_usage_daily.cost_micros + EXCLUDED.cost_micros`,
      [e.account_id, e.mode, usageDay(e), e.model, e.prompt_tokens, e.completion_tokens, e.cost_micros],
    );
  },
};
