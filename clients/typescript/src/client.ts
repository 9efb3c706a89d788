/** The client: `new Marketplace({ apiKey })` and its resources, one per area of the API. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UploadError } from './errors';
import { alreadyThere, fetchVerified, safeName } from './downloads';
import { ListIterator, type PageBody } from './paging';
import { Query, RequestOptions, Retrying, Transport } from './http';
import { type Grant, type Progress, type UploadedFile, Uploader } from './uploads';
import type { BodyOf, ItemOf, ListParams, QueryOf, ResultOf } from './types';
import type { paths } from './generated/api';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

export interface ClientOptions {
  /** Default: the SVC_API_KEY environment variable. */
  apiKey?: string;
  /** The service's root (a trailing /v1 is accepted). Default: SVC_URL, or http://127.0.0.1:3000. */
  baseUrl?: string;
  /** Retries of a call on network errors, timeouts, 409 idempotency_key_in_use, 429 and 5xx (default 3). */
  maxRetries?: number;
  /** Timeout of one attempt of an API call, in ms (default 60 000); downloads time out after this long without a byte. */
  timeout?: number;
  /** First backoff delay in ms, doubled per retry up to 8 s (default 500). */
  initialRetryDelay?: number;
  /** Parts and files in flight at once in uploads and downloads, 1-32 (default 4). */
  parallel?: number;
  /** Where unfinished multipart uploads are remembered for resuming. */
  uploadStateDir?: string;
}

const q = (value: string) => encodeURIComponent(value);

abstract class Resource {
  constructor(protected readonly client: Marketplace) {}
  protected get t(): Transport {
    return this.client.transport;
  }
  protected paged<T>(route: string, params: object = {}): ListIterator<T> {
    return new ListIterator<T>((query) => this.t.request<PageBody<T>>('GET', route, undefined, query), params as Query);
  }
}

type ModelFields = BodyOf<'/v1/models', 'post'>;
export type CreateModelParams = Omit<ModelFields, 'storage_path' | 'file_name' | 'file_size' | 'file_extension'> &
  Partial<Pick<ModelFields, 'storage_path' | 'file_name' | 'file_size' | 'file_extension'>> & {
    /** A local file to upload first (in parts when large, resuming an interrupted upload); fills in the file fields. */
    file?: string;
  };

export class Models extends Resource {
  /** Every published model matching the filters, page after page: `for await (const m of client.models.list({ type: 'rl-policy' }))`. */
  list(params: ListParams<'/v1/models'> = {}): ListIterator<ItemOf<'/v1/models'>> {
    return this.paged('/v1/models', params);
  }

  retrieve(idOrSlug: string): Promise<ResultOf<'/v1/models/{idOrSlug}', 'get'>> {
    return this.t.request('GET', `/v1/models/${q(idOrSlug)}`);
  }

  /**
   * Publishes a model. With `file`, uploads it first (in parts when large, resuming an
   * interrupted upload) and fills in `storage_path`, `file_name`, `file_size`, `file_extension`.
   */
  async create(params: CreateModelParams, options: RequestOptions & { onProgress?: Progress } = {}): Promise<ResultOf<'/v1/models', 'post'>> {
    const { file, ...fields } = params;
    const uploaded = file === undefined ? {} : await this.client.uploads.file(file, { onProgress: options.onProgress });
    return this.t.request('POST', '/v1/models', { ...fields, ...uploaded }, undefined, options);
  }

  update(idOrSlug: string, fields: BodyOf<'/v1/models/{idOrSlug}', 'patch'>): Promise<ResultOf<'/v1/models/{idOrSlug}', 'patch'>> {
    return this.t.request('PATCH', `/v1/models/${q(idOrSlug)}`, fields);
  }

  /** Unpublishes; buyers keep what they bought. */
  del(idOrSlug: string): Promise<ResultOf<'/v1/models/{idOrSlug}', 'delete'>> {
    return this.t.request('DELETE', `/v1/models/${q(idOrSlug)}`);
  }

  /**
   * Downloads the model's file into `dest` (a directory, or one ending in `/` made if missing,
   * or a file path), checked against the published size and sha256; the file's path. Nothing
   * is left at `dest` when the bytes are not the published ones (ChecksumMismatchError).
   */
  async download(idOrSlug: string, dest = '.'): Promise<string> {
    const grant = await this.t.request<ResultOf<'/v1/models/{idOrSlug}/download', 'post'>>('POST', `/v1/models/${q(idOrSlug)}/download`);
    const intoDirectory = dest.endsWith('/') || dest.endsWith(path.sep) || isDirectory(dest);
    const target = intoDirectory ? path.join(dest, safeName(grant.file_name)) : dest;
    return fetchVerified(this.t.retrying, grant.url, target, grant.file_size, grant.file_sha256, this.t.timeoutMs);
  }
}

export interface UploadDirResult {
  dataset: string;
  /** Names sent by this call. */
  uploaded: string[];
  /** Files already landed whole (same name and size), not sent again. */
  skipped: number;
  count: number;
  total_bytes: number;
}

export class Datasets extends Resource {
  list(params: ListParams<'/v1/datasets'> = {}): ListIterator<ItemOf<'/v1/datasets'>> {
    return this.paged('/v1/datasets', params);
  }

  retrieve(idOrSlug: string): Promise<ResultOf<'/v1/datasets/{idOrSlug}', 'get'>> {
    return this.t.request('GET', `/v1/datasets/${q(idOrSlug)}`);
  }

  /** A dataset draft: upload its shards (`uploadDir`), then `publish` it. */
  create(fields: BodyOf<'/v1/datasets', 'post'>, options: RequestOptions = {}): Promise<ResultOf<'/v1/datasets', 'post'>> {
    return this.t.request('POST', '/v1/datasets', fields, undefined, options);
  }

  update(idOrSlug: string, fields: BodyOf<'/v1/datasets/{idOrSlug}', 'patch'>): Promise<ResultOf<'/v1/datasets/{idOrSlug}', 'patch'>> {
    return this.t.request('PATCH', `/v1/datasets/${q(idOrSlug)}`, fields);
  }

  publish(idOrSlug: string): Promise<ResultOf<'/v1/datasets/{idOrSlug}/publish', 'post'>> {
    return this.t.request('POST', `/v1/datasets/${q(idOrSlug)}/publish`);
  }

  del(idOrSlug: string): Promise<ResultOf<'/v1/datasets/{idOrSlug}', 'delete'>> {
    return this.t.request('DELETE', `/v1/datasets/${q(idOrSlug)}`);
  }

  /** `{ items: [{ name, size, sha256 }], count, total_bytes }`: what landed (a draft) or was published. */
  shards(idOrSlug: string): Promise<ResultOf<'/v1/datasets/{idOrSlug}/shards', 'get'>> {
    return this.t.request('GET', `/v1/datasets/${q(idOrSlug)}/shards`);
  }

  /**
   * Every file of `dir` as a shard of the dataset draft `options.dataset`. A shard already
   * landed whole (same name and size) is skipped and a large one resumes its parts, so calling
   * it again after an interruption sends only what is missing.
   */
  async uploadDir(dir: string, options: { dataset: string; onProgress?: (name: string, sent: number, total: number) => void }): Promise<UploadDirResult> {
    const { dataset } = options;
    let names: string[];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort();
    } catch (error) {
      throw new UploadError(`cannot read the directory ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'usage');
    }
    if (!names.length) throw new UploadError(`${dir} holds no files to upload`, 'usage');
    const route = `/v1/datasets/${q(dataset)}/shards`;
    const sizeOf = (name: string) => fs.statSync(path.join(dir, name)).size;
    const landed = new Map((await this.shards(dataset)).items.map((s) => [s.name, s.size]));
    const todo = names.filter((n) => landed.get(n) !== sizeOf(n));
    const uploader = this.client.uploads.uploader;
    await each(todo, uploader.limiter.slots, async (name) => {
      const size = sizeOf(name);
      const onProgress: Progress | undefined = options.onProgress && ((sent, total) => options.onProgress!(name, sent, total));
      await uploader.send(path.join(dir, name), `shard ${dataset}/${name}`, () => this.t.request<Grant>('POST', route, { name, size }), onProgress);
    });
    const after = await this.shards(dataset);
    const whole = new Set(after.items.map((s) => `${s.name}\0${s.size}`));
    const missing = names.filter((n) => !whole.has(`${n}\0${sizeOf(n)}`));
    if (missing.length) throw new UploadError(`${missing.length} shard(s) did not land whole (${missing.join(', ')}); upload the directory again`);
    return { dataset, uploaded: todo, skipped: names.length - todo.length, count: after.count, total_bytes: after.total_bytes };
  }

  /**
   * Every shard of the dataset into the directory `dir`, each checked against its published
   * size and sha256; a shard already there with that sha256 is not fetched again. The paths, sorted.
   */
  async download(idOrSlug: string, dir = '.'): Promise<string[]> {
    fs.mkdirSync(dir, { recursive: true });
    const listed = (await this.shards(idOrSlug)).items;
    const paths: string[] = [];
    await each(listed, this.client.uploads.uploader.limiter.slots, async (shard) => {
      const target = path.join(dir, safeName(shard.name));
      paths.push(target);
      if (await alreadyThere(target, shard.size, shard.sha256)) return;
      const got = await this.t.request<ResultOf<'/v1/datasets/{idOrSlug}/shards/{path}', 'get'>>('GET', `/v1/datasets/${q(idOrSlug)}/shards/${q(shard.name)}`);
      await fetchVerified(this.t.retrying, got.url, target, got.size, got.sha256, this.t.timeoutMs);
    });
    return paths.sort();
  }
}

export class Uploads extends Resource {
  readonly uploader: Uploader;
  constructor(client: Marketplace, options: ClientOptions) {
    super(client);
    this.uploader = new Uploader(client.transport, { parallel: options.parallel, stateDir: options.uploadStateDir });
  }

  /** `{ max_bytes, extensions }`. */
  limits(): Promise<ResultOf<'/v1/uploads', 'get'>> {
    return this.t.request('GET', '/v1/uploads');
  }

  /**
   * Uploads a file (in parts above the service's threshold, `parallel` at a time; an
   * interrupted upload of the same file resumes). The fields a model publish takes.
   */
  file(file: string, options: { onProgress?: Progress } = {}): Promise<UploadedFile> {
    return this.uploader.file(file, options.onProgress);
  }
}

export class Purchases extends Resource {
  /** A checkout session: send the buyer to its `checkout_url`. The purchase is recorded when it is paid. */
  create(asset: string, fields: Omit<BodyOf<'/v1/purchases', 'post'>, 'asset'> = {} as never, options: RequestOptions = {}): Promise<ResultOf<'/v1/purchases', 'post'>> {
    return this.t.request('POST', '/v1/purchases', { ...fields, asset }, undefined, options);
  }

  list(params: ListParams<'/v1/purchases'> = {}): ListIterator<ItemOf<'/v1/purchases'>> {
    return this.paged('/v1/purchases', params);
  }
}

export class BalanceTransactions extends Resource {
  list(params: ListParams<'/v1/balance_transactions'> = {}): ListIterator<ItemOf<'/v1/balance_transactions'>> {
    return this.paged('/v1/balance_transactions', params);
  }
}

export class Payouts extends Resource {
  list(params: ListParams<'/v1/payouts'> = {}): ListIterator<ItemOf<'/v1/payouts'>> {
    return this.paged('/v1/payouts', params);
  }
}

export class Events extends Resource {
  list(params: ListParams<'/v1/events'> = {}): ListIterator<ItemOf<'/v1/events'>> {
    return this.paged('/v1/events', params);
  }
  retrieve(id: string): Promise<ResultOf<'/v1/events/{id}', 'get'>> {
    return this.t.request('GET', `/v1/events/${q(id)}`);
  }
}

export class WebhookEndpoints extends Resource {
  list(params: ListParams<'/v1/webhook_endpoints'> = {}): ListIterator<ItemOf<'/v1/webhook_endpoints'>> {
    return this.paged('/v1/webhook_endpoints', params);
  }
  retrieve(id: string): Promise<ResultOf<'/v1/webhook_endpoints/{id}', 'get'>> {
    return this.t.request('GET', `/v1/webhook_endpoints/${q(id)}`);
  }
  /** The answer carries the signing `secret`, this once. */
  create(fields: BodyOf<'/v1/webhook_endpoints', 'post'>, options: RequestOptions = {}): Promise<ResultOf<'/v1/webhook_endpoints', 'post'>> {
    return this.t.request('POST', '/v1/webhook_endpoints', fields, undefined, options);
  }
  update(id: string, fields: BodyOf<'/v1/webhook_endpoints/{id}', 'patch'>): Promise<ResultOf<'/v1/webhook_endpoints/{id}', 'patch'>> {
    return this.t.request('PATCH', `/v1/webhook_endpoints/${q(id)}`, fields);
  }
  del(id: string): Promise<ResultOf<'/v1/webhook_endpoints/{id}', 'delete'>> {
    return this.t.request('DELETE', `/v1/webhook_endpoints/${q(id)}`);
  }
  /** Queues one signed `webhook.test` event to this endpoint alone. */
  sendTest(id: string): Promise<ResultOf<'/v1/webhook_endpoints/{id}/test', 'post'>> {
    return this.t.request('POST', `/v1/webhook_endpoints/${q(id)}/test`);
  }
}

/**
 * `new Marketplace({ apiKey, baseUrl })`: the key defaults to SVC_API_KEY, the URL to SVC_URL
 * or http://127.0.0.1:3000.
 *
 * Every call is retried up to `maxRetries` times, with backoff, on network errors, timeouts,
 * 409 `idempotency_key_in_use`, 429 and 5xx; a POST sends one `Idempotency-Key` for all of its
 * attempts (yours, with `{ idempotencyKey }`, or one generated for the call).
 */
export class Marketplace {
  readonly transport: Transport;
  readonly models: Models;
  readonly datasets: Datasets;
  readonly uploads: Uploads;
  readonly purchases: Purchases;
  readonly balanceTransactions: BalanceTransactions;
  readonly payouts: Payouts;
  readonly events: Events;
  readonly webhookEndpoints: WebhookEndpoints;

  constructor(options: ClientOptions = {}) {
    const retrying = new Retrying(options.maxRetries ?? 3, options.initialRetryDelay ?? 500);
    this.transport = new Transport(options.apiKey ?? process.env.SVC_API_KEY ?? '', options.baseUrl ?? (process.env.SVC_URL || DEFAULT_BASE_URL), options.timeout ?? 60_000, retrying);
    this.models = new Models(this);
    this.datasets = new Datasets(this);
    this.uploads = new Uploads(this, options);
    this.purchases = new Purchases(this);
    this.balanceTransactions = new BalanceTransactions(this);
    this.payouts = new Payouts(this);
    this.events = new Events(this);
    this.webhookEndpoints = new WebhookEndpoints(this);
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** Any API call, e.g. `client.request('GET', '/v1/balance')`; errors typed and retried as every call's. */
  request<T = any>(method: string, route: string, body?: unknown, query?: Query, options?: RequestOptions): Promise<T> {
    return this.transport.request<T>(method.toUpperCase(), route, body, query, options);
  }

  me(): Promise<ResultOf<'/v1/me', 'get'>> {
    return this.request('GET', '/v1/me');
  }

  balance(): Promise<ResultOf<'/v1/balance', 'get'>> {
    return this.request('GET', '/v1/balance');
  }

  usage(query: QueryOf<'/v1/usage', 'get'> = {}): Promise<ResultOf<'/v1/usage', 'get'>> {
    return this.request('GET', '/v1/usage', undefined, query as Query);
  }
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** `work` over the items, `parallel` at a time; the first failure is thrown once all have stopped. */
async function each<T>(items: T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined && !failure; item = queue.shift()) {
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  if (failure) throw failure.error;
}

export type { paths };
