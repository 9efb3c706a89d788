#!/usr/bin/env node
/**
 * `robomarket`: the marketplace from a terminal for creators and buyers, with an API key only
 * (SVC_API_KEY, or `robomarket login`), built on this SDK. The operator CLI (`svc`, with the
 * admin token) is the server repository's, not this.
 *
 *   robomarket models create --file policy.onnx --title "Grasp Policy" --type rl-policy --price-cents 2500
 *   robomarket listen --forward-to http://localhost:4242/hooks
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_BASE_URL, Marketplace } from './client';
import { ApiError, MarketplaceError } from './errors';
import { listen, newListenSecret } from './listen';
import type { ListIterator } from './paging';
import { VERSION } from './version';

export const CLI_NAME = 'robomarket';

interface Option {
  name: string;
  type: 'string' | 'boolean';
  /** The value's placeholder in the help. */
  arg?: string;
  help: string;
  required?: boolean;
}

interface Context {
  values: Record<string, string | boolean | undefined>;
  args: string[];
  client(): Marketplace;
  out: (text: string) => void;
  err: (text: string) => void;
  json: boolean;
  env: NodeJS.ProcessEnv;
}

interface Command {
  path: string;
  /** Positional arguments, as shown in the usage line. */
  args?: string;
  summary: string;
  /** More lines of help. */
  details?: string;
  options: Option[];
  /** The number of positional arguments taken. */
  positionals?: number;
  run(ctx: Context): Promise<unknown>;
  /** The human rendering of the result (the default: its fields). */
  text?(result: any): string;
}

class UsageError extends MarketplaceError {
  override name = 'UsageError';
  readonly code = 'usage';
}

const GLOBAL_OPTIONS: Option[] = [
  { name: 'api-key', type: 'string', arg: 'KEY', help: 'the API key (default: SVC_API_KEY, then the key stored by `login`)' },
  { name: 'base-url', type: 'string', arg: 'URL', help: `the service's root URL (default: SVC_BASE_URL, SVC_URL, the URL stored by \`login\`, then ${DEFAULT_BASE_URL})` },
  { name: 'json', type: 'boolean', help: 'print the answer as JSON (errors too, on stderr)' },
  { name: 'help', type: 'boolean', help: 'show this help' },
];

const LIST_OPTIONS: Option[] = [
  { name: 'limit', type: 'string', arg: 'N', help: 'print at most N items (default 20; pages are followed)' },
  { name: 'all', type: 'boolean', help: 'print every item, page after page' },
];

const LISTING_FIELDS: Option[] = [
  { name: 'title', type: 'string', arg: 'TEXT', help: 'the title buyers see', required: true },
  { name: 'description', type: 'string', arg: 'TEXT', help: 'the description (Markdown)' },
  { name: 'license', type: 'string', arg: 'SPDX', help: 'the license, e.g. MIT or Apache-2.0' },
  { name: 'price-cents', type: 'string', arg: 'N', help: 'the price in US cents (0: free; default 0)' },
  { name: 'category', type: 'string', arg: 'NAME', help: 'the category' },
  { name: 'version', type: 'string', arg: 'V', help: 'the version string, e.g. 1.0.0' },
  { name: 'tags', type: 'string', arg: 'A,B', help: 'comma-separated tags' },
];

// ---------------------------------------------------------------------------------------------
// Configuration: $XDG_CONFIG_HOME/robomarket/config.json (or ~/.config/...), mode 0600.

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, CLI_NAME, 'config.json');
}

interface Config {
  api_key?: string;
  base_url?: string;
}

function readConfig(env: NodeJS.ProcessEnv): Config {
  const file = configPath(env);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Config;
  } catch (error) {
    throw new UsageError(`${file} is not a JSON object (${(error as Error).message}); run \`${CLI_NAME} login\` again`);
  }
}

/** Written to a temporary file made with mode 0600 in a 0700 directory, then renamed over the old one. */
function writeConfig(env: NodeJS.ProcessEnv, config: Config): string {
  const file = configPath(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temp, 0o600);
  fs.renameSync(temp, file);
  return file;
}

// ---------------------------------------------------------------------------------------------
// Helpers of the commands.

const str = (ctx: Context, name: string) => ctx.values[name] as string | undefined;

function int(ctx: Context, name: string, fallback?: number): number | undefined {
  const raw = str(ctx, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

const list = (ctx: Context, name: string) =>
  str(ctx, name)
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function listing(ctx: Context) {
  const fields: Record<string, unknown> = { title: str(ctx, 'title'), price_cents: int(ctx, 'price-cents', 0) };
  for (const name of ['description', 'license', 'category', 'version']) if (str(ctx, name) !== undefined) fields[name] = str(ctx, name);
  if (list(ctx, 'tags')) fields.tags = list(ctx, 'tags');
  return fields;
}

/** At most `--limit` items (default 20) of a list, or all with `--all`; the API's pages sized to match. */
async function take<T>(ctx: Context, make: (pageSize: number) => ListIterator<T>): Promise<T[]> {
  const all = Boolean(ctx.values.all);
  const limit = int(ctx, 'limit', 20)!;
  if (!all && limit < 1) throw new UsageError('--limit must be at least 1');
  const items: T[] = [];
  for await (const item of make(all ? 100 : Math.min(100, limit))) {
    items.push(item);
    if (!all && items.length >= limit) break;
  }
  return items;
}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '(none)';
  const cells = rows.map((r) => columns.map((c) => cell(c.split('.').reduce<any>((o, k) => o?.[k], r))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function fields(result: unknown): string {
  if (typeof result !== 'object' || result === null) return String(result);
  const entries = Object.entries(result as Record<string, unknown>);
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n');
}

const money = (cents: number, currency = 'usd') => `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;

/** Progress of an upload on stderr, when it is a terminal and the output is not JSON. */
function progress(ctx: Context, label: string) {
  if (ctx.json || !process.stderr.isTTY) return undefined;
  return (sent: number, total: number) => {
    process.stderr.write(`\r${label}: ${Math.floor((sent / Math.max(total, 1)) * 100)}% of ${total} bytes`);
    if (sent >= total) process.stderr.write('\n');
  };
}

async function readKeyFromStdin(ctx: Context): Promise<string> {
  if (process.stdin.isTTY) ctx.err('API key (svc_test_... or svc_live_...): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    if (Buffer.concat(chunks).includes(10)) break;
  }
  return Buffer.concat(chunks).toString('utf8').split('\n')[0].trim();
}

// ---------------------------------------------------------------------------------------------
// The commands.

const COMMANDS: Command[] = [
  {
    path: 'login',
    summary: 'store an API key (and the base URL) in your config file, mode 0600',
    details: `The key is checked with GET /v1/me first. Without --api-key it is read from stdin (one line).\nStored in $XDG_CONFIG_HOME/${CLI_NAME}/config.json (or ~/.config/${CLI_NAME}/config.json). SVC_API_KEY, when set, wins over it.`,
    options: [],
    async run(ctx) {
      const apiKey = str(ctx, 'api-key') ?? (await readKeyFromStdin(ctx));
      if (!apiKey) throw new UsageError('no API key given: pass --api-key KEY or write it on stdin');
      const config = readConfig(ctx.env);
      const baseUrl = str(ctx, 'base-url') ?? ctx.env.SVC_BASE_URL ?? ctx.env.SVC_URL ?? config.base_url;
      const me = await new Marketplace({ apiKey, baseUrl: baseUrl || DEFAULT_BASE_URL, maxRetries: 1 }).me();
      const file = writeConfig(ctx.env, { ...config, api_key: apiKey, ...(baseUrl ? { base_url: baseUrl } : {}) });
      return { account: me.id, name: me.name, mode: me.key.mode, config: file, base_url: baseUrl || DEFAULT_BASE_URL };
    },
    text: (r) => `Logged in to ${r.base_url} as ${r.name} (${r.account}, ${r.mode} mode). The key is in ${r.config} (mode 0600).`,
  },
  {
    path: 'logout',
    summary: 'remove the stored API key from your config file',
    options: [],
    async run(ctx) {
      const config = readConfig(ctx.env);
      const had = Boolean(config.api_key);
      delete config.api_key;
      const file = writeConfig(ctx.env, config);
      return { removed: had, config: file };
    },
    text: (r) => (r.removed ? `The key was removed from ${r.config}.` : `No key was stored in ${r.config}.`),
  },
  {
    path: 'whoami',
    summary: 'the account and key in use (GET /v1/me)',
    options: [],
    run: (ctx) => ctx.client().me(),
    text: (me) => `${me.name} <${me.email}> ${me.id}, key ${me.key.id} (${me.key.mode} mode)`,
  },
  {
    path: 'models list',
    summary: 'published models, newest first',
    options: [{ name: 'type', type: 'string', arg: 'TYPE', help: 'only this type (e.g. rl-policy, onnx-model)' }, { name: 'query', type: 'string', arg: 'TEXT', help: 'full-text search' }, ...LIST_OPTIONS],
    run: (ctx) => take(ctx, (limit) => ctx.client().models.list({ type: str(ctx, 'type'), q: str(ctx, 'query'), limit } as never)),
    text: (items) => table(items.map((m: any) => ({ ...m, price: money(m.price.amount, m.price.currency) })), ['slug', 'type', 'title', 'price', 'license']),
  },
  {
    path: 'models get',
    args: '<id-or-slug>',
    positionals: 1,
    summary: 'one model',
    options: [],
    run: (ctx) => ctx.client().models.retrieve(ctx.args[0]),
  },
  {
    path: 'models create',
    summary: 'upload a model file (in parts when large, resuming an interrupted upload) and publish it',
    details: 'Alias: models publish. The answer is the published model.',
    options: [
      { name: 'file', type: 'string', arg: 'PATH', help: 'the model file (.onnx, .pt, .safetensors, ...)', required: true },
      { name: 'type', type: 'string', arg: 'TYPE', help: 'the model type, e.g. rl-policy, onnx-model', required: true },
      ...LISTING_FIELDS.map((o) => (o.name === 'license' ? { ...o, required: true } : o)),
    ],
    async run(ctx) {
      return ctx.client().models.create({ ...listing(ctx), type: str(ctx, 'type'), file: str(ctx, 'file') } as never, { onProgress: progress(ctx, str(ctx, 'file')!) });
    },
    text: (m) => `Published ${m.slug} (${m.id}): ${m.title}, ${money(m.price.amount, m.price.currency)}, ${m.file?.size ?? '?'} bytes, sha256 ${m.file?.sha256 ?? '?'}`,
  },
  {
    path: 'models download',
    args: '<id-or-slug>',
    positionals: 1,
    summary: "download a model's file, checked against its published size and sha256 (nothing is kept otherwise)",
    options: [{ name: 'out', type: 'string', arg: 'PATH', help: 'a directory (made when it ends with /) or a file path (default: the current directory)' }],
    async run(ctx) {
      const file = await ctx.client().models.download(ctx.args[0], str(ctx, 'out') ?? '.');
      return { path: file, size: fs.statSync(file).size };
    },
    text: (r) => `${r.path} (${r.size} bytes, sha256 checked)`,
  },
  {
    path: 'datasets list',
    summary: 'published datasets, newest first',
    options: [{ name: 'query', type: 'string', arg: 'TEXT', help: 'full-text search' }, ...LIST_OPTIONS],
    run: (ctx) => take(ctx, (limit) => ctx.client().datasets.list({ q: str(ctx, 'query'), limit } as never)),
    text: (items) => table(items.map((d: any) => ({ ...d, price: money(d.price.amount, d.price.currency) })), ['slug', 'type', 'title', 'price', 'license']),
  },
  {
    path: 'datasets get',
    args: '<id-or-slug>',
    positionals: 1,
    summary: 'one dataset',
    options: [],
    run: (ctx) => ctx.client().datasets.retrieve(ctx.args[0]),
  },
  {
    path: 'datasets create',
    summary: 'a dataset draft: then `datasets upload DIR --dataset ID --publish`',
    options: [{ name: 'type', type: 'string', arg: 'TYPE', help: 'dataset, telemetry or calibration (default dataset)' }, ...LISTING_FIELDS],
    run: (ctx) => ctx.client().datasets.create({ ...listing(ctx), ...(str(ctx, 'type') ? { type: str(ctx, 'type') } : {}) } as never),
    text: (d) => `Draft ${d.id} (${d.slug}). Next: ${CLI_NAME} datasets upload DIR --dataset ${d.id} --publish`,
  },
  {
    path: 'datasets upload',
    args: '<dir>',
    positionals: 1,
    summary: "every file of DIR as a shard of a dataset draft (shards already landed whole are skipped; run it again to resume)",
    options: [
      { name: 'dataset', type: 'string', arg: 'ID', help: 'the dataset draft (from `datasets create`)', required: true },
      { name: 'publish', type: 'boolean', help: 'publish the dataset once every shard has landed' },
    ],
    async run(ctx) {
      const client = ctx.client();
      const dataset = str(ctx, 'dataset')!;
      const result = await client.datasets.uploadDir(ctx.args[0], { dataset });
      const published = ctx.values.publish ? await client.datasets.publish(dataset) : undefined;
      return { ...result, published: published ?? null };
    },
    text: (r) => `${r.uploaded.length} shard(s) sent, ${r.skipped} already there; ${r.count} shard(s), ${r.total_bytes} bytes${r.published ? `; published as ${r.published.slug}` : ''}`,
  },
  {
    path: 'datasets publish',
    args: '<id>',
    positionals: 1,
    summary: 'publish a dataset draft whose shards have landed',
    options: [],
    run: (ctx) => ctx.client().datasets.publish(ctx.args[0]),
  },
  {
    path: 'datasets download',
    args: '<id-or-slug> [dir]',
    positionals: 2,
    summary: "every shard of a dataset into DIR (default: the slug), each checked against its sha256; shards already there are not fetched again",
    options: [],
    async run(ctx) {
      const [dataset, dir = dataset] = ctx.args;
      const files = await ctx.client().datasets.download(dataset, dir);
      return { dir, files };
    },
    text: (r) => `${r.files.length} file(s) in ${r.dir}, each sha256 checked`,
  },
  {
    path: 'uploads file',
    args: '<path>',
    positionals: 1,
    summary: 'upload a file (in parts above the service threshold; an interrupted upload of the same file resumes)',
    details: 'Prints the storage_path to publish it with (POST /v1/models).',
    options: [],
    run: (ctx) => ctx.client().uploads.file(ctx.args[0], { onProgress: progress(ctx, ctx.args[0]) }),
  },
  {
    path: 'purchases create',
    args: '<asset>',
    positionals: 1,
    summary: 'a checkout session for a model or dataset (id or slug): pay at its checkout_url',
    options: [],
    run: (ctx) => ctx.client().purchases.create(ctx.args[0]),
    text: (s) => `Checkout ${s.id}: ${money(s.amount_cents, s.currency ?? 'usd')}, pay at ${s.checkout_url}`,
  },
  {
    path: 'purchases list',
    summary: "your purchases, newest first",
    options: [...LIST_OPTIONS],
    run: (ctx) => take(ctx, (limit) => ctx.client().purchases.list({ limit } as never)),
    text: (items) => table(items, ['id', 'asset.slug', 'amount_cents', 'status', 'created_at']),
  },
  {
    path: 'balance',
    summary: 'your balance as a creator (GET /v1/balance)',
    options: [],
    run: (ctx) => ctx.client().balance(),
    text: (b) => `available ${money(b.available_cents, b.currency)}, in transit ${money(b.in_transit_cents, b.currency)}, withheld ${money(b.withheld_cents, b.currency)} (as of ${b.as_of})`,
  },
  {
    path: 'transactions list',
    summary: 'balance transactions (sales, fees, payouts), newest first',
    options: [{ name: 'type', type: 'string', arg: 'TYPE', help: 'only this type (e.g. sale, payout)' }, ...LIST_OPTIONS],
    run: (ctx) => take(ctx, (limit) => ctx.client().balanceTransactions.list({ type: str(ctx, 'type'), limit } as never)),
    text: (items) => table(items, ['id', 'type', 'amount_cents', 'net_cents', 'created_at', 'description']),
  },
  {
    path: 'webhooks endpoints list',
    summary: 'your webhook endpoints',
    options: [...LIST_OPTIONS],
    run: (ctx) => take(ctx, (limit) => ctx.client().webhookEndpoints.list({ limit } as never)),
    text: (items) => table(items, ['id', 'url', 'enabled', 'events']),
  },
  {
    path: 'webhooks endpoints create',
    summary: 'a webhook endpoint; its signing secret is printed this once',
    options: [
      { name: 'url', type: 'string', arg: 'URL', help: 'where the service POSTs the events', required: true },
      { name: 'events', type: 'string', arg: 'A,B', help: 'comma-separated event types, e.g. listing.purchased,payout.paid', required: true },
      { name: 'description', type: 'string', arg: 'TEXT', help: 'a note for yourself' },
    ],
    run: (ctx) => ctx.client().webhookEndpoints.create({ url: str(ctx, 'url')!, events: list(ctx, 'events')!, ...(str(ctx, 'description') ? { description: str(ctx, 'description') } : {}) }),
    text: (e) => `Endpoint ${e.id} for ${e.url} (${(e.events ?? []).join(', ')}). Signing secret (shown once): ${e.secret}`,
  },
  {
    path: 'events list',
    summary: "your account's events, newest first (GET /v1/events)",
    options: [
      { name: 'type', type: 'string', arg: 'A,B', help: 'only these event types (comma-separated)' },
      { name: 'since', type: 'string', arg: 'TIME', help: 'only events created at or after TIME (unix seconds or ISO 8601 with an offset)' },
      ...LIST_OPTIONS,
    ],
    run: (ctx) => take(ctx, (limit) => ctx.client().events.list({ type: str(ctx, 'type'), 'created[gte]': str(ctx, 'since'), limit } as never)),
    text: (items) => table(items, ['id', 'type', 'created']),
  },
  {
    path: 'events get',
    args: '<id>',
    positionals: 1,
    summary: 'one event',
    options: [],
    run: (ctx) => ctx.client().events.retrieve(ctx.args[0]),
    text: (e) => JSON.stringify(e, null, 2),
  },
  {
    path: 'listen',
    summary: "forward your account's events to a local URL, signed with a secret printed at start (as `stripe listen`)",
    details: [
      'Follows GET /v1/events with your API key only (the key needs webhooks:write; no operator token, the',
      'service may be remote) and POSTs each new event to --forward-to, once, with an svc-signature header',
      "made with the printed whsec_... secret in the service's own format: your receiver verifies it with",
      "the SDK's constructEvent(rawBody, header, secret). Only events created after it started are",
      'forwarded (or from --since on). Ctrl-C stops it.',
    ].join('\n'),
    options: [
      { name: 'forward-to', type: 'string', arg: 'URL', help: 'the local receiver, e.g. http://localhost:4242/hooks', required: true },
      { name: 'events', type: 'string', arg: 'A,B', help: 'only these event types (comma-separated; default all)' },
      { name: 'since', type: 'string', arg: 'TIME', help: 'also forward the events created from TIME on (unix seconds or ISO 8601)' },
      { name: 'secret', type: 'string', arg: 'WHSEC', help: 'sign with this secret instead of a new one (keeps your receiver configured across runs)' },
      { name: 'interval', type: 'string', arg: 'SECONDS', help: 'seconds between two polls of /v1/events (default 2; decimals allowed)' },
    ],
    async run(ctx) {
      const forwardTo = str(ctx, 'forward-to')!;
      try {
        if (!/^https?:$/.test(new URL(forwardTo).protocol)) throw new Error('not http(s)');
      } catch {
        throw new UsageError(`--forward-to must be an http(s) URL, got "${forwardTo}"`);
      }
      const interval = Number(str(ctx, 'interval') ?? 2);
      if (!Number.isFinite(interval) || interval < 0.05 || interval > 3600) throw new UsageError('--interval must be a number of seconds from 0.05 to 3600');
      const since = parseSince(str(ctx, 'since'));
      const secret = str(ctx, 'secret') ?? newListenSecret();
      const stop = new AbortController();
      const quit = () => stop.abort();
      process.once('SIGINT', quit);
      process.once('SIGTERM', quit);
      const print = (text: string, json: object) => ctx.out(ctx.json ? `${JSON.stringify(json)}\n` : `${text}\n`);
      try {
        await listen(ctx.client(), {
          forwardTo,
          events: list(ctx, 'events'),
          since,
          secret,
          interval,
          signal: stop.signal,
          onReady: (info) =>
            print(`> Ready! Forwarding events to ${forwardTo}. Your webhook signing secret is ${info.secret} (^C to quit)`, { object: 'listen', ...info }),
          onForward: (r) =>
            print(
              `${new Date().toISOString()}  --> ${r.type} [${r.id}]  <-- ${r.status === null ? `failed (${r.error})` : `[${r.status}]`} POST ${forwardTo} (${r.ms} ms)`,
              { object: 'forward', ...r },
            ),
          onPollError: (error) => ctx.err(`warning: polling /v1/events failed, trying again: ${describe(error)}\n`),
        });
      } finally {
        process.removeListener('SIGINT', quit);
        process.removeListener('SIGTERM', quit);
      }
      return undefined;
    },
  },
];

// Aliases.
const at = (path: string) => COMMANDS.findIndex((c) => c.path === path);
COMMANDS.splice(at('models create') + 1, 0, { ...COMMANDS[at('models create')], path: 'models publish', summary: 'the same as models create', details: 'Alias of models create. The answer is the published model.' });
COMMANDS.splice(at('events list') + 1, 0, { ...COMMANDS[at('events list')], path: 'events', summary: 'the same as events list' });

function parseSince(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const ms = /(Z|[+-]\d\d:?\d\d)$/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--since must be unix seconds or an ISO 8601 date-time with an offset, got "${raw}"`);
  return Math.floor(ms / 1000);
}

// ---------------------------------------------------------------------------------------------
// Help, errors, the entry point.

function usageOf(command: Command): string {
  const options = [...command.options, ...GLOBAL_OPTIONS];
  const required = command.options.filter((o) => o.required).map((o) => `--${o.name} ${o.arg ?? ''}`.trim());
  const lines = [
    `${CLI_NAME} ${command.path}${command.args ? ` ${command.args}` : ''}${required.length ? ` ${required.join(' ')}` : ''} [options]`,
    '',
    `${command.summary[0].toUpperCase()}${command.summary.slice(1)}.`,
  ];
  if (command.details) lines.push('', command.details);
  lines.push('', 'Options:');
  const labels = options.map((o) => `  --${o.name}${o.arg ? ` ${o.arg}` : ''}`);
  const width = Math.max(...labels.map((l) => l.length));
  options.forEach((o, i) => lines.push(`${labels[i].padEnd(width)}  ${o.help}${o.required ? ' (required)' : ''}`));
  return `${lines.join('\n')}\n`;
}

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.length + (c.args ? c.args.length + 1 : 0)));
  return [
    `${CLI_NAME} ${VERSION}: the robotics marketplace for creators and buyers, with an API key only.`,
    '',
    `Usage: ${CLI_NAME} <command> [options]     ${CLI_NAME} <command> --help for its options`,
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${`${c.path}${c.args ? ` ${c.args}` : ''}`.padEnd(width)}  ${c.summary}`),
    '',
    `The key: SVC_API_KEY, or \`${CLI_NAME} login\` (stored in ${configPath()}, mode 0600).`,
    `The service: --base-url, SVC_BASE_URL (or SVC_URL), the URL stored by login, or ${DEFAULT_BASE_URL}.`,
    'Every command takes --json (machine-readable output). Errors print their code, message and',
    'request id on stderr and exit with 1 (2 for a usage error).',
    '',
  ].join('\n');
}

function describe(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}${error.requestId ? ` (request ${error.requestId})` : ''}`;
  if (error instanceof UsageError) return error.message;
  if (error instanceof MarketplaceError) return `${(error as { code?: string }).code ?? error.name}: ${error.message}`;
  return String((error as Error)?.message ?? error);
}

function errorJson(error: unknown) {
  if (error instanceof ApiError) return { error: { status: error.status, code: error.code, message: error.message, request_id: error.requestId ?? null } };
  return { error: { code: (error as { code?: string }).code ?? 'error', message: (error as Error)?.message ?? String(error), request_id: null } };
}

/** Runs the CLI; the exit code. */
export async function runCli(argv: string[], out: (text: string) => void, err: (text: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-')) break;
    words.push(a);
  }
  // The longest command path the first words spell.
  let command: Command | undefined;
  for (let n = Math.min(words.length, 3); n > 0 && !command; n--) command = COMMANDS.find((c) => c.path === words.slice(0, n).join(' '));
  const json = argv.includes('--json');
  if (!command) {
    if (!words.length && argv[0] === '--version') {
      out(`${VERSION}\n`);
      return 0;
    }
    if (!words.length || words[0] === 'help') {
      if (words[0] === 'help' && words.length > 1) return runCli([...words.slice(1), '--help'], out, err, env);
      const asked = words[0] === 'help' || argv[0] === '--help' || argv[0] === '-h';
      (asked ? out : err)(mainHelp());
      return asked ? 0 : 2;
    }
    const prefix = words.join(' ');
    const near = COMMANDS.filter((c) => c.path.startsWith(`${words[0]} `) || c.path === words[0]).map((c) => `${CLI_NAME} ${c.path}`);
    err(`${CLI_NAME}: unknown command "${prefix}"${near.length ? `; did you mean:\n  ${near.join('\n  ')}` : `; see ${CLI_NAME} --help`}\n`);
    return 2;
  }
  const rest = argv.slice(command.path.split(' ').length);
  const options = [...command.options, ...GLOBAL_OPTIONS];
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: Object.fromEntries(options.map((o) => [o.name, { type: o.type, ...(o.name === 'help' ? { short: 'h' } : {}) }])),
      allowPositionals: true,
      strict: true,
    }) as { values: Record<string, string | boolean | undefined>; positionals: string[] });
  } catch (error) {
    err(`${CLI_NAME} ${command.path}: ${(error as Error).message.split('\n')[0]}\n\n${usageOf(command)}`);
    return 2;
  }
  if (values.help) {
    out(usageOf(command));
    return 0;
  }
  const wanted = command.positionals ?? 0;
  const needed = (command.args ?? '').split(' ').filter((a) => a.startsWith('<')).length;
  const missing = command.options.filter((o) => o.required && values[o.name] === undefined).map((o) => `--${o.name}`);
  if (positionals.length < needed || positionals.length > wanted || missing.length) {
    const why = missing.length ? `missing ${missing.join(', ')}` : positionals.length < needed ? `missing ${command.args}` : `unexpected argument "${positionals[wanted]}"`;
    err(`${CLI_NAME} ${command.path}: ${why}\n\n${usageOf(command)}`);
    return 2;
  }
  let client: Marketplace | undefined;
  const ctx: Context = {
    values,
    args: positionals,
    out,
    err,
    json,
    env,
    client() {
      if (client) return client;
      const config = readConfig(env);
      const apiKey = (values['api-key'] as string | undefined) || env.SVC_API_KEY || config.api_key;
      if (!apiKey) throw new UsageError(`no API key: set SVC_API_KEY, pass --api-key, or run \`${CLI_NAME} login\``);
      const baseUrl = (values['base-url'] as string | undefined) || env.SVC_BASE_URL || env.SVC_URL || config.base_url || DEFAULT_BASE_URL;
      return (client = new Marketplace({ apiKey, baseUrl }));
    },
  };
  try {
    const result = await command.run(ctx);
    if (result !== undefined) out(json ? `${JSON.stringify(result, null, 2)}\n` : `${(command.text ?? fields)(result)}\n`);
    return 0;
  } catch (error) {
    if (json) err(`${JSON.stringify(errorJson(error), null, 2)}\n`);
    else if (error instanceof ApiError) {
      err(`error: ${error.code}: ${error.message}\n  status ${error.status}, request ${error.requestId ?? '(none)'}\n`);
    } else err(`error: ${describe(error)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2), (text) => process.stdout.write(text), (text) => process.stderr.write(text)).then(
    (code) => (process.exitCode = code),
    (error) => {
      process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
