import type { InferenceCallMetered } from '../src/inference/events';
import { usageDay } from '../src/inference/usage-totals';
import type { Projection } from '../src/projection-runner/projection';
import { INFERENCE_USAGE_READ_MODEL } from '../src/inference/usage-queries';

/**
 * inference_usage_daily: metered calls summed per account, mode, UTC day and model, so a
 * usage window of up to 365 days reads at most 365 rows per model.
 */
export const inferenceUsageProjection: Projection = {
  name: INFERENCE_USAGE_READ_MODEL,
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
  apply(tx, event) {
    return inferenceUsageProjection.applyBatch!(tx, [event]);
  },
  /** One statement per batch: a busy gateway meters thousands of calls a second. */
  async applyBatch(tx, events) {
    const calls = events.map((e) => e.data as InferenceCallMetered);
    const column = <T>(pick: (c: InferenceCallMetered) => T) => calls.map(pick);
    // Applied once per event per build (the checkpoint commits with it), so adding is exact.
    await tx.query(
      `INSERT INTO inference_usage_daily AS u (account_id, mode, day, model, calls, prompt_tokens, completion_tokens, cost_micros)
       SELECT account_id, mode, day, model, count(*), sum(prompt_tokens), sum(completion_tokens), sum(cost_micros)
         FROM unnest($1::text[], $2::text[], $3::date[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])
              AS c(account_id, mode, day, model, prompt_tokens, completion_tokens, cost_micros)
        GROUP BY account_id, mode, day, model
       ON CONFLICT (account_id, mode, day, model) DO UPDATE SET
         calls = u.calls + EXCLUDED.calls,
         prompt_tokens = u.prompt_tokens + EXCLUDED.prompt_tokens,
         completion_tokens = u.completion_tokens + EXCLUDED.completion_tokens,
         cost_micros = u.cost_micros + EXCLUDED.cost_micros`,
      [
        column((c) => c.account_id),
        column((c) => c.mode),
        column((c) => usageDay(c)),
        column((c) => c.model),
        column((c) => c.prompt_tokens),
        column((c) => c.completion_tokens),
        column((c) => c.cost_micros),
      ],
    );
  },
};
