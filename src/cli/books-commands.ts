import { CliError, query } from './admin-client';
import type { CliCommand } from './command-spec';
import { table } from './format';
import { LEDGER_COMMANDS } from './ledger-commands';

const verify = LEDGER_COMMANDS['ledger verify'] as CliCommand & { client?: 'admin' };

/** A chain check's differences, one a line. */
const describeDigests = (d: { differences: { check: string; message: string }[] }) => d.differences.map((x) => `  ${x.check}: ${x.message}`).join('\n');

/**
 * Closing the books (issue 38, section 3): `svc ledger close|periods`, and `svc ledger verify`
 * with `--digests`, which also recomputes the journal's hash chain from the log. Registered
 * after LEDGER_COMMANDS, whose `ledger verify` it extends.
 */
export const BOOKS_COMMANDS: Record<string, CliCommand> = {
  'ledger verify': {
    ...verify,
    usage: `${verify.usage} [--digests]`,
    examples: [...(verify.examples ?? []), 'svc ledger verify --mode live --digests'],
    options: {
      ...verify.options,
      digests: { type: 'boolean', description: 'Also recompute the journal’s hash chain from the event log and name the first entry that differs, and check every closed period.' },
    },
    run: async (client, o, positionals) => {
      const result = (await verify.run(client, o, positionals)) as Record<string, any>;
      if (!o.digests) return result;
      const digests = await client.request('GET', `/admin/ledger/digests${query({ mode: o.mode })}`);
      return { ...result, ok: result.ok && digests.ok, ledger_ok: result.ok, digests };
    },
    print: (r, o) => {
      if (!r.digests) return verify.print!(r, o);
      const ledger = verify.print!({ ...r, ok: r.ledger_ok }, o);
      const chains = r.digests.chains.map((c: any) => `${c.mode}: ${c.entries} entries, head ${c.head ? `${c.head.seq} ${c.head.digest}` : '(empty)'}`).join('; ');
      return r.digests.ok
        ? `${ledger}\njournal digests verified: ${chains || 'no entries'}; ${r.digests.periods_checked} closed periods match the log`
        : `${ledger}\nthe journal's digests do not hold:\n${describeDigests(r.digests)}`;
    },
    failure: (r) => {
      if (r.digests && !r.digests.ok) return new CliError(r.digests.differences[0].message, 'digests_differ');
      return verify.failure?.(r.digests ? { ...r, ok: r.ledger_ok } : r);
    },
  },
  'ledger close': {
    usage: 'ledger close --mode test|live --through YYYY-MM-DD',
    examples: ['svc ledger close --mode live --through 2026-10-31'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: whose books to close.' },
      through: { type: 'string', required: true, description: 'The period’s last day (UTC): nothing is booked before the midnight after it once closed.' },
    },
    run: (client, o) => client.request('POST', '/admin/ledger/close', { mode: o.mode, through: o.through }),
    print: (r) =>
      [
        `closed the ${r.mode} books through ${r.through} (period ${r.period_id}): later events that belong to it are booked from ${r.closes_at}`,
        `chain digest: ${r.digest ? `entry ${r.digest.seq} ${r.digest.digest}` : '(no entries)'}`,
        table(r.trial_balance.accounts, ['account', 'currency', 'debits_cents', 'credits_cents', 'balance_cents']),
      ].join('\n'),
  },
  'ledger adjust': {
    usage: 'ledger adjust --mode test|live --debit ACCOUNT --credit ACCOUNT --amount CENTS --reason TEXT',
    examples: [
      'svc ledger adjust --mode live --debit platform:adjustments --credit creator:acc_123:payable --amount 500 --reason "goodwill: late delivery"',
      'svc ledger adjust --mode live --debit platform:fee_revenue --credit platform:suspense --amount 12 --reason "correction of entry adj_..."',
    ],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: whose books.' },
      debit: { type: 'string', required: true, description: 'The account debited: a platform account (platform:adjustments, platform:fee_revenue, ...) or creator:<account id>:payable.' },
      credit: { type: 'string', required: true, description: 'The account credited, as --debit; at most one side is a creator’s payable.' },
      amount: { type: 'string', required: true, description: 'Whole cents, at least 1.' },
      reason: { type: 'string', required: true, description: 'Why the entry is booked: shown in the journal and to an auditor.' },
    },
    run: (client, o) => {
      const amount = /^\d{1,15}$/.test(o.amount) ? Number(o.amount) : o.amount;
      return client.request('POST', '/admin/ledger/adjust', { mode: o.mode, debit_account: o.debit, credit_account: o.credit, amount_cents: amount, reason: o.reason });
    },
    print: (r) =>
      `booked ${r.id} (${r.mode}): debit ${r.debit_account}, credit ${r.credit_account}, ${r.amount_cents} ${r.currency}: ${r.reason}` +
      (r.balance_transaction ? `\nthe creator's balance transaction ${r.balance_transaction.id}: adjustment of ${r.balance_transaction.net_cents}` : ''),
  },
  'ledger periods': {
    usage: 'ledger periods --mode test|live',
    examples: ['svc ledger periods --mode live', 'svc ledger periods --mode live --json'],
    options: { mode: { type: 'string', required: true, description: 'test or live: whose closed periods to list.' } },
    run: (client, o) => client.request('GET', `/admin/ledger/periods${query({ mode: o.mode })}`),
    print: (r) =>
      r.items.length
        ? table(
            r.items.map((p: any) => ({ ...p, digest: p.digest ? `${p.digest.seq}:${p.digest.digest.slice(0, 16)}` : '' })),
            ['period_id', 'through', 'starts_at', 'closes_at', 'closed_at', 'digest', 'actor'],
          )
        : 'no period is closed',
  },
};
