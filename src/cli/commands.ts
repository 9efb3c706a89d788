import { AdminClient, CliError } from './admin-client';
import type { CliCommand } from './command-spec';
import { CATALOG_COMMANDS } from './catalog-commands';
import { DATASET_COMMANDS } from './dataset-commands';
import { describeCopy, eventsCopy } from './events-copy';
import { FACTORY_COMMANDS } from './factory-commands';
import { table } from './format';
import { INFERENCE_COMMANDS } from './inference-commands';
import { LEDGER_COMMANDS } from './ledger-commands';
import { OPERATOR_COMMANDS, REASON_OPTION } from './operator-commands';
import { BOOKS_COMMANDS } from './books-commands';
import { REPORT_COMMANDS } from './report-commands';
import { listenAndForward, untilInterrupted } from './webhooks-listen';

const list = (value: string | undefined) =>
  value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);

function integerOption(name: string, value: string): number {
  if (!/^-?\d+$/.test(value)) throw new CliError(`--${name} must be an integer, got "${value}"`, 'usage', 2);
  return Number(value);
}

const fields = (result: Record<string, unknown>) =>
  Object.entries(result)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? (v.length ? v.join(',') : '(unrestricted)') : v === null ? '-' : String(v)}`)
    .join('\n');

const CONSUMER_COLUMNS = ['name', 'build', 'lag', 'parked', 'state', 'leader', 'position', 'updated_at'];

/** "-" when it has read every event, else the age of the oldest it has not: "0.042s". */
const lagCell = (lag: { behind: boolean; lag_seconds: number }) => (lag.behind ? `${lag.lag_seconds}s` : '-');

/** A projection or subscriber as one status line: STALLED or the failure it retries, else ok or rebuilding. */
const consumerRow = (c: any) => ({
  ...c,
  lag: lagCell(c),
  state: c.stalled_since
    ? `STALLED since ${c.stalled_since}: ${c.error?.message}`
    : c.error
      ? `failing (attempt ${c.error.attempts}): ${c.error.message}`
      : c.rebuilding
        ? `rebuilding ${c.rebuilding.build} (lag ${lagCell(c.rebuilding)})`
        : 'ok',
});

interface ProjectionLine {
  name: string;
  rebuilding: { build: string; lag_seconds: number } | null;
}

/**
 * Asks for the rebuild and waits until every new build serves: the API answers by then, or
 * earlier (before its connection would count as idle) with those still catching up shown as
 * rebuilding, and they are watched on GET /admin/projections from there. On a terminal, a
 * line on stderr shows each build still catching up and the age of the events it is at.
 */
async function rebuildAndWait(client: AdminClient, path: string): Promise<{ items: ProjectionLine[] }> {
  const asked = client.request<{ items: ProjectionLine[] }>('POST', path);
  let answered = false;
  asked.then(
    () => (answered = true),
    () => (answered = true),
  );
  while (!answered) {
    await Promise.race([asked.catch(() => undefined), sleep(500)]);
    if (!answered) await rebuildProgress(client);
  }
  let { items } = await asked;
  const watched = new Set(items.flatMap((p) => (p.rebuilding ? [p.rebuilding.build] : [])));
  // Done with a build once its projection no longer shows it rebuilding: it serves (or a newer build replaced it).
  while (items.some((p) => p.rebuilding && watched.has(p.rebuilding.build))) {
    await sleep(500);
    const status = await rebuildProgress(client);
    items = items.map((line) => status.items.find((p) => p.name === line.name) ?? line);
  }
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  return { items };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The projections' status, shown as a progress line on stderr when it is a terminal. */
async function rebuildProgress(client: AdminClient): Promise<{ items: ProjectionLine[] }> {
  const status = await client.request<{ items: ProjectionLine[] }>('GET', '/admin/projections');
  const open = status.items.filter((p) => p.rebuilding);
  // A rebuild reads from the start of the log: its lag is the age of the events it is at.
  if (process.stderr.isTTY && open.length) {
    process.stderr.write(`\rrebuilding ${open.map((p) => `${p.name} (at events ${Math.floor(p.rebuilding!.lag_seconds)} s old)`).join(', ')}\x1b[K`);
  }
  return status;
}

export const COMMANDS: Record<string, CliCommand> = {
  'accounts create': {
    usage: 'accounts create --name N --email E [--slug S]',
    examples: ['svc accounts create --name "Acme Robotics" --email ops@acme.test'],
    options: {
      name: { type: 'string', required: true, description: 'The account’s display name.' },
      email: { type: 'string', required: true, description: 'The account’s contact email address.' },
      slug: { type: 'string', description: 'The account’s URL name; made from --name when not given.' },
    },
    run: (client, o) => client.request('POST', '/admin/accounts', { name: o.name, email: o.email, slug: o.slug }),
    print: fields,
  },
  'keys create': {
    usage: 'keys create --account ID_OR_SLUG --mode test|live [--tier free|premium] [--scopes a,b] [--name N] [--expires-at ISO]',
    examples: ['svc keys create --account acme-robotics --mode test --scopes models:read,models:upload', 'svc keys create --account acme-robotics --mode live --tier premium'],
    options: {
      account: { type: 'string', required: true, description: 'The account the key belongs to, by id or slug.' },
      mode: { type: 'string', required: true, description: 'test (the sandbox, no real money) or live.' },
      tier: { type: 'string', description: 'free (the default) or premium; only premium keys may call the inference API.' },
      scopes: { type: 'string', description: 'Comma-separated scopes the key carries, e.g. models:read,models:upload; none given means unrestricted.' },
      name: { type: 'string', description: 'A label for the key, shown by keys list.' },
      'expires-at': { type: 'string', description: 'An ISO 8601 instant after which the key stops working; never when not given.' },
    },
    run: (client, o) =>
      client.request('POST', '/admin/keys', {
        account: o.account,
        mode: o.mode,
        tier: o.tier,
        scopes: list(o.scopes),
        name: o.name,
        expires_at: o['expires-at'],
      }),
    print: (r) => `${fields(r)}\n\nThe key is shown only now; store it safely.`,
  },
  'keys list': {
    usage: 'keys list --account ID_OR_SLUG',
    examples: ['svc keys list --account acme-robotics --json'],
    options: { account: { type: 'string', required: true, description: 'The account whose keys to list, by id or slug.' } },
    run: (client, o) => client.request('GET', `/admin/keys?account=${encodeURIComponent(o.account)}`),
    print: (r) => table(r.items, ['id', 'name', 'mode', 'tier', 'scopes', 'active', 'expires_at', 'revoked_at', 'created_at', 'activation_checkout_url']),
  },
  'keys activation': {
    usage: 'keys activation KEY_ID',
    examples: ['svc keys activation key_...'],
    options: {},
    positionals: ['KEY_ID'],
    run: (client, _o, [keyId]) => client.request('POST', `/admin/keys/${encodeURIComponent(keyId)}/activation`),
    print: (r) => `pay the activation of ${r.id} at ${r.activation_checkout_url} (open until ${r.activation_expires_at})`,
  },
  'keys revoke': {
    usage: 'keys revoke KEY_ID',
    examples: ['svc keys revoke key_...'],
    options: {},
    positionals: ['KEY_ID'],
    run: (client, _o, [keyId]) => client.request('POST', `/admin/keys/${encodeURIComponent(keyId)}/revoke`),
    print: (r) => `revoked ${r.id}`,
  },
  'credits grant': {
    usage: 'credits grant --account ID_OR_SLUG --mode test|live --amount N',
    examples: ['svc credits grant --account acme-robotics --mode test --amount 10'],
    options: {
      account: { type: 'string', required: true, description: 'The account to grant credits to, by id or slug.' },
      mode: { type: 'string', required: true, description: 'test or live: credits are kept per mode.' },
      amount: { type: 'string', required: true, description: 'How many generation credits to add (a positive whole number).' },
    },
    run: (client, o) =>
      client.request('POST', '/admin/credits', { account: o.account, mode: o.mode, amount: integerOption('amount', o.amount) }),
    print: (r) => `${r.account} (${r.mode}) now has ${r.credits} credits`,
  },
  'projections status': {
    usage: 'projections status',
    examples: ['svc projections status', 'svc projections status --json'],
    options: {},
    run: (client) => client.request('GET', '/admin/projections'),
    print: (r) => `${table(r.items.map(consumerRow), CONSUMER_COLUMNS)}\n\n${table(r.subscribers.map(consumerRow), CONSUMER_COLUMNS)}`,
  },
  'projections rebuild': {
    usage: 'projections rebuild NAME | --all',
    examples: ['svc projections rebuild balance_transactions', 'svc projections rebuild --all'],
    options: { all: { type: 'boolean', description: 'Rebuild every projection instead of the one NAME gives.' } },
    positionals: ['NAME'],
    run: (client, o, [name]) => {
      if (o.all && name) throw new CliError('give a projection NAME or --all, not both', 'usage', 2);
      if (!o.all && !name) throw new CliError('give a projection NAME or --all', 'usage', 2);
      return rebuildAndWait(client, `/admin/projections/${encodeURIComponent(o.all ? 'all' : name)}/rebuild`);
    },
    print: (r) => table(r.items.map(consumerRow), CONSUMER_COLUMNS),
  },
  'projections parked': {
    usage: 'projections parked',
    examples: ['svc projections parked'],
    options: {},
    run: (client) => client.request('GET', '/admin/projections/parked'),
    print: (r) => table(r.items, ['consumer', 'position', 'type', 'event_id', 'attempts', 'error']),
  },
  'projections retry-parked': {
    usage: 'projections retry-parked NAME',
    examples: ['svc projections retry-parked catalog_listings'],
    options: {},
    positionals: ['NAME'],
    run: (client, _o, [name]) => {
      if (!name) throw new CliError('give a projection or subscriber NAME', 'usage', 2);
      return client.request('POST', `/admin/projections/${encodeURIComponent(name)}/retry-parked`);
    },
    print: (r) => `retried ${r.retried}, still parked ${r.still_parked}`,
  },
  ...CATALOG_COMMANDS,
  ...DATASET_COMMANDS,
  ...INFERENCE_COMMANDS,
  ...LEDGER_COMMANDS,
  ...OPERATOR_COMMANDS,
  ...BOOKS_COMMANDS,
  ...REPORT_COMMANDS,
  ...FACTORY_COMMANDS,
  'webhooks listen': {
    usage: 'webhooks listen --account ID_OR_SLUG --forward-to URL [--mode test|live] [--events a,b]',
    examples: ['svc webhooks listen --account acme-robotics --forward-to http://localhost:4000/hooks'],
    options: {
      account: { type: 'string', required: true, description: 'The account whose events to listen to, by id or slug.' },
      'forward-to': { type: 'string', required: true, description: 'The local URL each delivery is POSTed to, signed as a real endpoint’s.' },
      mode: { type: 'string', description: 'test (the default) or live.' },
      events: { type: 'string', description: 'Comma-separated event types to forward; every type when not given.' },
    },
    run: (client, o) => {
      const mode = o.mode ?? 'test';
      if (mode !== 'test' && mode !== 'live') throw new CliError('--mode must be test or live', 'usage', 2);
      // With --json the one JSON document is the result; progress goes to stderr.
      const log = (line: string) => (o.json ? process.stderr : process.stdout).write(`${line}\n`);
      return listenAndForward(client, { account: o.account, mode, forwardTo: o['forward-to'], events: list(o.events), log, until: untilInterrupted() });
    },
    print: (r) => `forwarded ${r.forwarded} deliveries; endpoint ${r.endpoint_id} deleted`,
  },
  'webhooks rotate': {
    usage: 'webhooks rotate ENDPOINT_ID [--expires-in SECONDS]',
    examples: ['svc webhooks rotate we_...', 'svc webhooks rotate we_... --expires-in 0   # the old secret stops signing now'],
    options: { 'expires-in': { type: 'string', description: 'Seconds the old secret keeps signing beside the new one (default a day; 0 stops it now).' } },
    positionals: ['ENDPOINT_ID'],
    run: (client, o, [endpointId]) => {
      const body = o['expires-in'] === undefined ? {} : { expires_in: integerOption('expires-in', o['expires-in']) };
      return client.request('POST', `/admin/webhook_endpoints/${encodeURIComponent(endpointId)}/rotate_secret`, body);
    },
    print: (r) =>
      `new signing secret of ${r.id}: ${r.secret}\n` +
      (r.previous_secret_expires_at ? `the old secret signs too until ${r.previous_secret_expires_at}` : 'the old secret no longer signs') +
      '\n\nThe secret is shown only now; store it safely.',
  },
  'webhooks resend': {
    usage: 'webhooks resend DELIVERY_ID',
    examples: ['svc webhooks resend whd_...'],
    options: {},
    positionals: ['DELIVERY_ID'],
    run: (client, _o, [deliveryId]) => client.request('POST', `/admin/webhook_deliveries/${encodeURIComponent(deliveryId)}/retry`),
    print: (r) => `${r.id} (${r.event_type} [${r.event_id}]) is queued for another attempt now; attempts so far: ${r.attempts}`,
  },
  'purchases refund': {
    usage: 'purchases refund PURCHASE_ID [--amount CENTS] [--reason TEXT] [--idempotency-key KEY]',
    examples: ['svc purchases refund pur_... --reason "ticket 4711: wrong file"', 'svc purchases refund pur_... --amount 1000 --reason "ticket 4711" --idempotency-key refund-ticket-4711'],
    options: { amount: { type: 'string', description: 'Cents to give back, for a partial refund; the whole purchase when not given.' }, ...REASON_OPTION },
    positionals: ['PURCHASE_ID'],
    // The global --idempotency-key on a retry (after a crash, a timeout) is the same refund: the processor refunds once.
    run: (client, o, [purchaseId]) =>
      client.request('POST', `/admin/purchases/${encodeURIComponent(purchaseId)}/refund`, {
        ...(o.amount === undefined ? {} : { amount_cents: integerOption('amount', o.amount) }),
        ...(o.reason === undefined ? {} : { reason: o.reason }),
      }),
    print: (r, o) =>
      r.status === 'refunded'
        ? `refunded ${r.id}: ${r.amount_cents} ${r.currency} back to the buyer`
        : o.amount !== undefined
          ? `refund of ${o.amount} ${r.currency} of ${r.id} requested; the purchase stays paid`
          : `refund of ${r.id} requested; the purchase turns refunded when the processor confirms it`,
  },
  'payouts run': {
    usage: 'payouts run --mode test|live [--account ID_OR_SLUG]',
    examples: ['svc payouts run --mode test', 'svc payouts run --mode live --account acme-robotics'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: which mode’s balances to pay out.' },
      account: { type: 'string', description: 'Pay out only this account (id or slug); every account with a balance when not given.' },
    },
    run: (client, o) => client.request('POST', '/admin/payouts/run', { mode: o.mode, account: o.account }),
    print: (r) => table(r.results ?? r.items, r.results ? ['account_id', 'status', 'payout_id', 'amount_cents', 'failure_code', 'reason'] : ['id', 'amount_cents', 'currency', 'status', 'created_at', 'arrival_date']),
    // Every account the run could pay was paid; a failed one makes the run fail (issue 38, defect 1).
    failure: (r) => {
      const failed = (r.results ?? []).filter((x: any) => x.status === 'failed');
      return failed.length ? new CliError(`${failed.length} payouts failed: ${failed.map((x: any) => `${x.account_id} (${x.failure_code})`).join(', ')}`, 'payouts_failed') : undefined;
    },
  },
  'payouts pause': {
    usage: 'payouts pause --account ID_OR_SLUG --mode test|live [--reason TEXT]',
    examples: ['svc payouts pause --account acme-robotics --mode live --reason "KYC review"'],
    options: {
      account: { type: 'string', required: true, description: 'The account whose payouts to hold, by id or slug.' },
      mode: { type: 'string', required: true, description: 'test or live: payouts are paused per mode.' },
      ...REASON_OPTION,
    },
    run: (client, o) => client.request('POST', '/admin/payouts/pause', { account: o.account, mode: o.mode, ...(o.reason === undefined ? {} : { reason: o.reason }) }),
    print: (r) => `payouts of ${r.account} (${r.mode}) are paused`,
  },
  'payouts resume': {
    usage: 'payouts resume --account ID_OR_SLUG --mode test|live',
    examples: ['svc payouts resume --account acme-robotics --mode live'],
    options: {
      account: { type: 'string', required: true, description: 'The account whose payouts to start again, by id or slug.' },
      mode: { type: 'string', required: true, description: 'test or live: payouts are resumed per mode.' },
    },
    run: (client, o) => client.request('POST', '/admin/payouts/resume', { account: o.account, mode: o.mode }),
    print: (r) => `payouts of ${r.account} (${r.mode}) are running`,
  },
  'payouts destination': {
    usage: 'payouts destination --account ID_OR_SLUG --mode test|live --stripe-account acct_...',
    examples: ['svc payouts destination --account acme-robotics --mode live --stripe-account acct_...'],
    options: {
      account: { type: 'string', required: true, description: 'The account whose payouts to direct, by id or slug.' },
      mode: { type: 'string', required: true, description: 'test or live: each mode has its own destination.' },
      'stripe-account': { type: 'string', required: true, description: 'The connected Stripe account (acct_...) that receives the transfers.' },
    },
    run: (client, o) => client.request('POST', '/admin/payouts/destination', { account: o.account, mode: o.mode, stripe_account: o['stripe-account'] }),
    print: (r) => `payouts of ${r.account} (${r.mode}) go to ${r.stripe_account}`,
  },
  'events copy': {
    usage: 'events copy --to esdb://HOST:PORT?tls=false',
    examples: ['svc events copy --to esdb://127.0.0.1:2113?tls=false', 'DATABASE_URL=postgres://... svc events copy --to esdb://eventstore:2113?tls=false'],
    options: { to: { type: 'string', required: true, description: 'The EventStoreDB connection string to copy the event log to.' } },
    client: 'local',
    run: (env, o) => eventsCopy(o.to, env),
    print: (r) => describeCopy(r),
    failure: (r) => (r.ok ? undefined : new CliError(describeCopy(r), 'copy_mismatch')),
  },
};
