import { query } from './admin-client';
import type { CliCommand } from './command-spec';

const COLUMNS = ['id', 'stage', 'credits_spent', 'error', 'created_at', 'prompt'];

/** `svc factory jobs`: an operator's look at an account's generation jobs. */
export const FACTORY_COMMANDS: Record<string, CliCommand> = {
  'factory jobs': {
    usage: 'factory jobs --account ID_OR_SLUG [--mode test|live] [--json]',
    examples: ['svc factory jobs --account acme-robotics --mode test --json'],
    options: {
      account: { type: 'string', required: true, description: 'The account whose generation jobs to list, by id or slug.' },
      mode: { type: 'string', description: 'test or live; test when not given.' },
    },
    run: (client, o) => client.request('GET', `/admin/factory/jobs${query({ account: o.account, mode: o.mode })}`),
    print: (r) => {
      const rows = r.items.map((j: any) => ({ ...j, error: j.error ? `${j.error.stage}: ${j.error.code}` : '', prompt: j.prompt.length > 50 ? `${j.prompt.slice(0, 50)}…` : j.prompt }));
      const widths = COLUMNS.map((c) => Math.max(c.length, ...rows.map((row: any) => String(row[c] ?? '').length)));
      const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
      const body = rows.length ? [line(COLUMNS), ...rows.map((row: any) => line(COLUMNS.map((c) => String(row[c] ?? ''))))].join('\n') : '(no jobs)';
      return `${r.account} (${r.mode}): ${r.credits} credits left\n${body}${r.has_more ? '\n(more: --json for the cursor)' : ''}`;
    },
  },
};
