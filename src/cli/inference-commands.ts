import { CliError, query } from './admin-client';
import type { CliCommand } from './command-spec';

function decimalOption(name: string, value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new CliError(`--${name} must be a non-negative number of USD per million tokens, got "${value}"`, 'usage', 2);
  return Number(value);
}

const usd = (n: number) => `$${n.toFixed(6)}`;

/** `svc inference price` and `svc usage`: operator commands of the inference API. */
export const INFERENCE_COMMANDS: Record<string, CliCommand> = {
  'inference price': {
    usage: 'inference price --model MODEL --input USD_PER_MILLION --output USD_PER_MILLION',
    examples: ['svc inference price --model svc-fast-8b --input 0.10 --output 0.30'],
    options: {
      model: { type: 'string', required: true, description: 'The public model id to price, e.g. svc-fast-8b.' },
      input: { type: 'string', required: true, description: 'USD per million input (prompt) tokens.' },
      output: { type: 'string', required: true, description: 'USD per million output (completion) tokens.' },
    },
    run: (client, o) =>
      client.request('POST', '/admin/inference/prices', {
        model: o.model,
        input_usd_per_million: decimalOption('input', o.input),
        output_usd_per_million: decimalOption('output', o.output),
      }),
    print: (r) => `${r.id} now costs $${r.pricing.input_usd_per_million} per million input tokens and $${r.pricing.output_usd_per_million} per million output tokens`,
  },
  'usage verify': {
    usage: 'usage verify [--account ID_OR_SLUG] [--mode test|live]',
    examples: ['svc usage verify', 'svc usage verify --account acme-robotics --mode live'],
    options: {
      account: { type: 'string', description: 'Check only this account (id or slug); every account when not given.' },
      mode: { type: 'string', description: 'Check only test or live; both when not given.' },
    },
    run: (client, o) => client.request('GET', `/admin/usage/verify${query({ account: o.account, mode: o.mode })}`),
    print: (r) =>
      r.ok
        ? `usage verified: ${r.rows_checked} daily totals from ${r.calls_checked} metered calls match the event log`
        : `usage differs from the event log: ${describe(r.first_difference)}`,
    failure: (r) => (r.ok ? undefined : new CliError(describe(r.first_difference), 'usage_mismatch')),
  },
  usage: {
    usage: 'usage --account ID_OR_SLUG --mode test|live [--days N]',
    examples: ['svc usage --account acme-robotics --mode live --days 7'],
    options: {
      account: { type: 'string', required: true, description: 'The account whose usage to show, by id or slug.' },
      mode: { type: 'string', required: true, description: 'test or live: usage is kept per mode.' },
      days: { type: 'string', description: 'How many days back to count, today included; 30 when not given.' },
    },
    run: (client, o) => client.request('GET', `/admin/usage${query({ account: o.account, mode: o.mode, days: o.days })}`),
    print: (r) =>
      [
        `last ${r.window_days} days: ${r.summary.calls} calls, ${r.summary.total_tokens} tokens, ${usd(r.summary.cost_usd)}`,
        ...r.by_model.map((m: any) => `  ${m.model}: ${m.calls} calls, ${m.total_tokens} tokens, ${usd(m.cost_usd)}`),
      ].join('\n'),
  },
};

function describe(d: { account_id: string; mode: string; day: string; model: string; field: string; expected: unknown; actual: unknown }): string {
  return `account ${d.account_id} (${d.mode}), ${d.day}, ${d.model}: ${d.field} is ${JSON.stringify(d.actual)} in the read model but ${JSON.stringify(d.expected)} from the events`;
}
