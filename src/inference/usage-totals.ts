import type { Mode } from '../platform/mode';
import type { InferenceCallMetered } from './events';

/** Metered calls of one account, mode, UTC day and model, summed: a row of inference_usage_daily. */
export interface DailyUsage {
  account_id: string;
  mode: Mode;
  /** YYYY-MM-DD, UTC. */
  day: string;
  model: string;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
}

/** GET /v1/usage (spec part 2, decisions section 8). */
export interface UsageReport {
  window_days: number;
  summary: { calls: number; total_tokens: number; prompt_tokens: number; completion_tokens: number; cost_micros: number; cost_usd: number };
  by_model: { model: string; calls: number; total_tokens: number; prompt_tokens: number; completion_tokens: number; cost_micros: number; cost_usd: number }[];
}

/** The UTC day a call counts on: the day it started. */
export const usageDay = (call: Pick<InferenceCallMetered, 'started_at'>): string => call.started_at.slice(0, 10);

/** First UTC day of a window of `days` days ending today. */
export function windowStart(days: number, now = new Date()): string {
  return new Date(now.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
}

/** The identity of a daily row: account, mode, day and model. */
export const usageKey = (r: Pick<DailyUsage, 'account_id' | 'mode' | 'day' | 'model'>) => `${r.account_id}:${r.mode}:${r.day}:${r.model}`;

/** Adds one metered call to its day's row (the audit's replay; the projection does the same in SQL). */
export function addCall(rows: Map<string, DailyUsage>, call: InferenceCallMetered): void {
  const day = usageDay(call);
  const key = usageKey({ ...call, day });
  const row = rows.get(key) ?? { account_id: call.account_id, mode: call.mode, day, model: call.model, calls: 0, prompt_tokens: 0, completion_tokens: 0, cost_micros: 0 };
  row.calls += 1;
  row.prompt_tokens += call.prompt_tokens;
  row.completion_tokens += call.completion_tokens;
  row.cost_micros += call.cost_micros;
  rows.set(key, row);
}

const usd = (micros: number) => micros / 1_000_000;

export function usageReport(rows: readonly DailyUsage[], windowDays: number): UsageReport {
  const models = new Map<string, UsageReport['by_model'][number]>();
  for (const row of rows) {
    const m = models.get(row.model) ?? { model: row.model, calls: 0, total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost_micros: 0, cost_usd: 0 };
    m.calls += row.calls;
    m.prompt_tokens += row.prompt_tokens;
    m.completion_tokens += row.completion_tokens;
    m.total_tokens = m.prompt_tokens + m.completion_tokens;
    m.cost_micros += row.cost_micros;
    m.cost_usd = usd(m.cost_micros);
    models.set(row.model, m);
  }
  const byModel = [...models.values()].sort((a, b) => a.model.localeCompare(b.model));
  const sum = (f: 'calls' | 'prompt_tokens' | 'completion_tokens' | 'cost_micros') => byModel.reduce((n, m) => n + m[f], 0);
  const cost = sum('cost_micros');
  return {
    window_days: windowDays,
    summary: {
      calls: sum('calls'),
      total_tokens: sum('prompt_tokens') + sum('completion_tokens'),
      prompt_tokens: sum('prompt_tokens'),
      completion_tokens: sum('completion_tokens'),
      cost_micros: cost,
      cost_usd: usd(cost),
    },
    by_model: byModel,
  };
}
