import type { CliCommand } from './command-spec';
import { table } from './format';

const REASON = { type: 'string' as const, description: 'Why (a ticket, a sentence): kept with the events this records; a named operator must give one.' };

/** The `--reason` option of the commands that take one (refunds, dispute closes, pauses). */
export const REASON_OPTION = { reason: REASON };

/** `svc operators ...`: named operators and their tokens (role admin). */
export const OPERATOR_COMMANDS: Record<string, CliCommand> = {
  'operators create': {
    usage: 'operators create NAME [--role finance|operations|admin]',
    examples: ['svc operators create alice --role finance', 'svc operators create bob --role operations --json'],
    options: { role: { type: 'string', description: 'finance (refunds, disputes, payouts, ledger), operations (read models, webhooks, keys) or admin (all); operations when not given.' } },
    positionals: ['NAME'],
    run: (client, o, [name]) => client.request('POST', '/admin/operators', { name, ...(o.role === undefined ? {} : { role: o.role }) }),
    print: (r) => `operator ${r.name} (${r.role}) created; their token, shown only now:\n${r.token}`,
  },
  'operators list': {
    usage: 'operators list',
    examples: ['svc operators list', 'svc operators list --json'],
    options: {},
    run: (client) => client.request('GET', '/admin/operators'),
    print: (r) => table(r.items, ['name', 'role', 'created_at', 'revoked_at']),
  },
  'operators revoke': {
    usage: 'operators revoke NAME',
    examples: ['svc operators revoke alice'],
    options: {},
    positionals: ['NAME'],
    run: (client, _o, [name]) => client.request('POST', `/admin/operators/${encodeURIComponent(name)}/revoke`),
    print: (r) => `operator ${r.name}'s token is revoked (${r.revoked_at})`,
  },
};
