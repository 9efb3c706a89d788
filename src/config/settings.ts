import * as path from 'node:path';
import * as ipaddr from 'ipaddr.js';

/** Typed settings, read once from the environment at start (decisions.md section 1). */
export interface Settings {
  readonly nodeEnv: string;
  readonly port: number;
  readonly host: string;
  readonly publicBaseUrl: string;
  readonly dataDir: string;
  readonly databaseUrl?: string;
  /** EventStoreDB (KurrentDB) connection string: events go there, read models stay in Postgres. */
  readonly eventStoreUrl?: string;
  /** How long an event-store call rides out a server that does not answer (a node restart) before a 503. */
  readonly eventStoreRetryMs: number;
  readonly adminToken?: string;
  readonly canonicalHost?: string;
  readonly payments: 'sandbox' | 'stripe';
  /** Stripe keys per mode (PAYMENTS=stripe); a mode without them cannot take payments. */
  readonly stripe: StripeSettings;
  readonly webhookRetrySchedule: readonly number[];
  /** How long a webhook receiver has to answer (decisions section 6: 10 s). */
  readonly webhookTimeoutMs: number;
  /** AES-256-GCM key (base64 or hex, 32 bytes) sealing endpoint secrets; unset: DATA_DIR/webhook_encryption_key. */
  readonly webhookEncryptionKey?: string;
  readonly platformFeeBps: number;
  /** The sandbox processor's fee on a payment: bps of the amount plus fixed cents (Stripe's standard 2.9% + 30); and on a dispute (Stripe's 15 dollars). */
  readonly sandboxProcessorFee: { bps: number; fixedCents: number; disputeCents: number };
  /** Largest JSON request body accepted, in bytes. */
  readonly bodyLimitBytes: number;
  /** Slow clients are cut off (docs/security.md): the whole request, its headers, an idle socket, an idle keep-alive connection. */
  readonly http: HttpTimeouts;
  /**
   * Which peers' X-Forwarded-For / X-Forwarded-Proto to believe (TRUST_PROXY): false (none, the
   * default), true (every hop), a hop count, or addresses and CIDRs. It decides the client
   * address (the console's sign-in limit, the request log) and whether a request came over https
   * (the session cookie's Secure flag).
   */
  readonly trustProxy: boolean | number | string[];
  /** Run projections and subscribers in this process (API replicas at scale set WORKERS=false). */
  readonly workers: boolean;
  /** S3-compatible object storage; unset bucket: the local blob store under DATA_DIR. */
  readonly s3?: S3Settings;
  /** Uploads: the per-object cap published by GET /v1/uploads, and when and how grants split a file into parts. */
  readonly uploads: UploadSettings;
  /** How long a consumer's leader keeps its lease without renewing it (a crashed leader's work moves after this). */
  readonly consumerLeaseTtlMs: number;
  /** svc ledger verify reports a payout in transit longer than this (seconds; default 3 days). */
  readonly payoutInTransitMaxSeconds: number;
  /** Failures on one event before a consumer parks it (or, for money, reports itself stalled). */
  readonly consumerMaxAttempts: number;
  /** A rebuild, catching up beside the live build of its read model, pauses this percentage of each batch's time after it. */
  readonly rebuildPausePercent: number;
  /** GET /readyz fails while a read model has left an event unread longer than this (seconds). */
  readonly readyMaxLagSeconds: number;
  /** OpenAI-compatible engine for live inference and live generation planning; unset: those answer 503. */
  readonly inferenceUpstream?: InferenceUpstreamSettings;
  /** Least severe log records written (LOG_LEVEL). */
  readonly logLevel: LogLevel;
  /**
   * Keys, accounts and prices kept in each process, changed by their events (issue 27): a
   * copy the log has not confirmed for maxAgeSeconds is read again; at most size of each.
   * maxAgeSeconds 0 reads them on every request.
   */
  readonly authCache: { maxAgeSeconds: number; size: number };
  /**
   * Inspection of published files (issue 40, docs/catalog.md): at most maxReadBytes read
   * and timeMs spent on one file (INSPECTION_MAX_READ_BYTES, INSPECTION_TIME_MS). Time is
   * elapsed time, which bounds the CPU the inspection takes. Files of at most inlineMaxBytes
   * (INSPECTION_INLINE_MAX_BYTES) are inspected before the publish answers, larger ones by
   * the inspection worker (src/catalog/inspection-worker.ts).
   */
  readonly inspection: { maxReadBytes: number; timeMs: number; inlineMaxBytes: number };
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function logLevel(env: NodeJS.ProcessEnv): LogLevel {
  const value = (optional(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(value)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  return value as LogLevel;
}

export interface InferenceUpstreamSettings {
  /** Base URL up to and including /v1, e.g. http://127.0.0.1:8000/v1 (vLLM) or http://127.0.0.1:11434/v1 (Ollama). */
  readonly url: string;
  readonly apiKey?: string;
  /** Upstream model name serving each public model id (INFERENCE_UPSTREAM_MODELS); an id not named is sent as is. */
  readonly models: Readonly<Record<string, string>>;
  /** Longest wait for the upstream's first chunk, and between two chunks, before the call fails. */
  readonly timeoutMs: number;
}

export interface HttpTimeouts {
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

export interface UploadSettings {
  readonly maxBytes: number;
  /** A file larger than this is granted a multipart upload. */
  readonly multipartThresholdBytes: number;
  /** The part size grants aim for (larger when the file would otherwise need more than 10,000 parts). */
  readonly partSizeBytes: number;
}

export interface S3Settings {
  readonly bucket: string;
  readonly region: string;
  readonly endpoint?: string;
  /** S3_PUBLIC_ENDPOINT: the address clients reach the server at, signed into the URLs they are given (default: endpoint). */
  readonly publicEndpoint?: string;
  readonly forcePathStyle: boolean;
  /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; unset: the SDK's default provider chain. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

export interface StripeModeKeys {
  readonly secretKey: string;
  readonly webhookSecret: string;
}

export interface StripeSettings {
  readonly test?: StripeModeKeys;
  readonly live?: StripeModeKeys;
  /** STRIPE_API_BASE: another API host speaking Stripe's wire format (stripe-mock, a test stand-in). */
  readonly apiBase?: { readonly protocol: 'http' | 'https'; readonly host: string; readonly port: number };
}

export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A 32-byte key given as 64 hex digits or as base64. */
export function decodeKey32(text: string, name: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes, as 64 hex digits or base64`);
  return key;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function webhookEncryptionKey(env: NodeJS.ProcessEnv, nodeEnv: string): string | undefined {
  const key = optional(env, 'WEBHOOK_ENCRYPTION_KEY');
  if (!key) {
    if (nodeEnv === 'production') throw new ConfigError('WEBHOOK_ENCRYPTION_KEY is required in production (openssl rand -hex 32)');
    return undefined;
  }
  decodeKey32(key, 'WEBHOOK_ENCRYPTION_KEY');
  return key;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function trustProxy(env: NodeJS.ProcessEnv): boolean | number | string[] {
  const value = optional(env, 'TRUST_PROXY');
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((s) => s.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (address.includes(':') ? 128 : 32));
    if (!ipaddr.isValid(address) || !validBits || extra !== undefined) {
      throw new ConfigError(`TRUST_PROXY must be "true", "false", a hop count, or addresses/CIDRs separated by commas; "${entry}" is none of these`);
    }
  }
  return entries;
}

function httpTimeouts(env: NodeJS.ProcessEnv): HttpTimeouts {
  const requestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 1000, 3_600_000);
  const headersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 1000, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return Object.freeze({
    requestTimeoutMs,
    headersTimeoutMs,
    idleTimeoutMs: integer(env, 'HTTP_IDLE_TIMEOUT_MS', 30_000, 1000, 3_600_000),
    keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1000, 3_600_000),
  });
}

function s3Settings(env: NodeJS.ProcessEnv): S3Settings | undefined {
  const bucket = optional(env, 'S3_BUCKET');
  const endpoint = optional(env, 'S3_ENDPOINT');
  if (!bucket) {
    if (endpoint) throw new ConfigError('S3_ENDPOINT is set but S3_BUCKET is not');
    if (optional(env, 'S3_PUBLIC_ENDPOINT')) throw new ConfigError('S3_PUBLIC_ENDPOINT is set but S3_BUCKET is not');
    return undefined;
  }
  const pathStyle = optional(env, 'S3_FORCE_PATH_STYLE') ?? 'false';
  if (pathStyle !== 'true' && pathStyle !== 'false') {
    throw new ConfigError(`S3_FORCE_PATH_STYLE must be "true" or "false", got "${pathStyle}"`);
  }
  const accessKeyId = optional(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = optional(env, 'AWS_SECRET_ACCESS_KEY');
  return Object.freeze({
    bucket,
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    region: optional(env, 'S3_REGION') ?? 'us-east-1',
    endpoint,
    publicEndpoint: optional(env, 'S3_PUBLIC_ENDPOINT'),
    forcePathStyle: pathStyle === 'true',
  });
}

function stripeModeKeys(env: NodeJS.ProcessEnv, mode: 'TEST' | 'LIVE'): StripeModeKeys | undefined {
  const secretKey = optional(env, `STRIPE_SECRET_KEY_${mode}`);
  const webhookSecret = optional(env, `STRIPE_WEBHOOK_SECRET_${mode}`);
  if (!secretKey && !webhookSecret) return undefined;
  if (!secretKey || !webhookSecret) {
    throw new ConfigError(`STRIPE_SECRET_KEY_${mode} and STRIPE_WEBHOOK_SECRET_${mode} must be set together`);
  }
  return Object.freeze({ secretKey, webhookSecret });
}

function stripeSettings(env: NodeJS.ProcessEnv, payments: 'sandbox' | 'stripe'): StripeSettings {
  const test = stripeModeKeys(env, 'TEST');
  const live = stripeModeKeys(env, 'LIVE');
  if (payments === 'stripe' && !test && !live) {
    throw new ConfigError('PAYMENTS=stripe needs STRIPE_SECRET_KEY_TEST/STRIPE_WEBHOOK_SECRET_TEST or the _LIVE pair');
  }
  const base = optional(env, 'STRIPE_API_BASE');
  let apiBase: StripeSettings['apiBase'];
  if (base) {
    let url: URL;
    try {
      url = new URL(base);
    } catch {
      throw new ConfigError(`STRIPE_API_BASE must be a URL such as http://127.0.0.1:12111, got "${base}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('STRIPE_API_BASE must be an http or https URL');
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    apiBase = Object.freeze({ protocol, host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)) });
  }
  return Object.freeze({ test, live, apiBase });
}

function inferenceUpstream(env: NodeJS.ProcessEnv): InferenceUpstreamSettings | undefined {
  const url = optional(env, 'INFERENCE_UPSTREAM_URL');
  const apiKey = optional(env, 'INFERENCE_UPSTREAM_KEY');
  if (!url) {
    if (apiKey) throw new ConfigError('INFERENCE_UPSTREAM_KEY is set but INFERENCE_UPSTREAM_URL is not');
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`INFERENCE_UPSTREAM_URL must be a URL such as http://127.0.0.1:8000/v1, got "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError('INFERENCE_UPSTREAM_URL must be an http or https URL');
  return Object.freeze({
    url: url.replace(/\/+$/, ''),
    apiKey,
    models: upstreamModels(optional(env, 'INFERENCE_UPSTREAM_MODELS')),
    timeoutMs: integer(env, 'INFERENCE_UPSTREAM_TIMEOUT_MS', 60_000, 100, 600_000),
  });
}

/** "svc-fast-8b=llama3.1:8b,svc-reason-70b=meta-llama/Llama-3.3-70B-Instruct" */
function upstreamModels(raw: string | undefined): Readonly<Record<string, string>> {
  const models: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    const id = pair.slice(0, at).trim();
    const upstream = pair.slice(at + 1).trim();
    if (at < 1 || !upstream) throw new ConfigError(`INFERENCE_UPSTREAM_MODELS must be id=upstream_model pairs separated by commas, got "${pair}"`);
    models[id] = upstream;
  }
  return Object.freeze(models);
}

/**
 * The scheme and a host are checked here, so a typo fails before anything opens; the
 * client checks the rest when the app connects (a ConfigError naming EVENTSTORE_URL too).
 */
function eventStoreUrlSetting(env: NodeJS.ProcessEnv): string | undefined {
  const url = optional(env, 'EVENTSTORE_URL');
  if (url && !/^(esdb|kurrentdb|kurrent)(\+discover)?:\/\/[^/?#\s]+/.test(url)) {
    throw new ConfigError(`EVENTSTORE_URL must be an EventStoreDB connection string such as esdb://127.0.0.1:2113?tls=false, got "${redactUrl(url)}"`);
  }
  return url;
}

/** A connection string without its password, for error messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const eventStoreUrl = eventStoreUrlSetting(env);
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = optional(env, 'HOST') ?? '127.0.0.1';
  const payments = optional(env, 'PAYMENTS') ?? 'sandbox';
  if (payments !== 'sandbox' && payments !== 'stripe') {
    throw new ConfigError(`PAYMENTS must be "sandbox" or "stripe", got "${payments}"`);
  }
  const nodeEnv = optional(env, 'NODE_ENV') ?? 'development';
  if (nodeEnv === 'production' && payments === 'sandbox') {
    // decisions section 1: the sandbox would hand out live entitlements without taking money.
    throw new ConfigError('PAYMENTS=sandbox cannot serve live mode in production: set PAYMENTS=stripe');
  }
  const schedule = (optional(env, 'WEBHOOK_RETRY_SCHEDULE') ?? '0,5,300,1800,7200,18000,36000,36000').split(',');
  if (!schedule.every((s) => /^\d+$/.test(s.trim()))) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be comma-separated whole seconds, e.g. "0,5,300"');
  }
  const canonicalHost = optional(env, 'CANONICAL_HOST');
  if (canonicalHost && !canonicalHost.startsWith('www.')) {
    throw new ConfigError(`CANONICAL_HOST must be the www host, got "${canonicalHost}"`);
  }
  const publicBaseUrl = (optional(env, 'PUBLIC_BASE_URL') ?? `http://127.0.0.1:${port}`).replace(/\/+$/, '');
  return Object.freeze({
    nodeEnv,
    port,
    host,
    publicBaseUrl,
    dataDir: path.resolve(optional(env, 'DATA_DIR') ?? './data'),
    databaseUrl: optional(env, 'DATABASE_URL'),
    eventStoreUrl,
    eventStoreRetryMs: integer(env, 'EVENTSTORE_RETRY_MS', 10_000, 0, 600_000),
    adminToken: optional(env, 'ADMIN_TOKEN'),
    canonicalHost,
    payments,
    stripe: stripeSettings(env, payments),
    webhookRetrySchedule: Object.freeze(schedule.map((s) => Number(s.trim()))),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
    webhookEncryptionKey: webhookEncryptionKey(env, nodeEnv),
    platformFeeBps: integer(env, 'PLATFORM_FEE_BPS', 1500, 0, 10000),
    sandboxProcessorFee: {
      bps: integer(env, 'SANDBOX_PROCESSOR_FEE_BPS', 290, 0, 10000),
      fixedCents: integer(env, 'SANDBOX_PROCESSOR_FEE_FIXED_CENTS', 30, 0, 100_000),
      disputeCents: integer(env, 'SANDBOX_DISPUTE_FEE_CENTS', 1500, 0, 100_000),
    },
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    http: httpTimeouts(env),
    trustProxy: trustProxy(env),
    workers: boolean(env, 'WORKERS', true),
    s3: s3Settings(env),
    uploads: {
      // S3's largest object (docs/decisions.md "Multipart uploads").
      maxBytes: integer(env, 'UPLOAD_MAX_BYTES', 5 * 1024 ** 4, 1, 5 * 1024 ** 4),
      multipartThresholdBytes: integer(env, 'UPLOAD_MULTIPART_THRESHOLD', 100 * 1024 ** 2, 5 * 1024 ** 2, 5 * 1024 ** 3),
      partSizeBytes: integer(env, 'UPLOAD_PART_SIZE', 64 * 1024 ** 2, 5 * 1024 ** 2, 5 * 1024 ** 3),
    },
    consumerLeaseTtlMs: integer(env, 'CONSUMER_LEASE_TTL_MS', 5000, 200, 600_000),
    payoutInTransitMaxSeconds: integer(env, 'PAYOUT_IN_TRANSIT_MAX', 3 * 24 * 3600, 0, 365 * 24 * 3600),
    consumerMaxAttempts: integer(env, 'CONSUMER_MAX_ATTEMPTS', 5, 1, 1000),
    rebuildPausePercent: integer(env, 'REBUILD_PAUSE_PERCENT', 1000, 0, 10_000),
    readyMaxLagSeconds: integer(env, 'READY_MAX_LAG_SECONDS', 30, 1, 86_400),
    inferenceUpstream: inferenceUpstream(env),
    logLevel: logLevel(env),
    authCache: {
      maxAgeSeconds: integer(env, 'AUTH_CACHE_MAX_AGE', 60, 0, 86_400),
      size: integer(env, 'AUTH_CACHE_SIZE', 10_000, 1, 10_000_000),
    },
    inspection: {
      maxReadBytes: integer(env, 'INSPECTION_MAX_READ_BYTES', 64 * 1024 ** 2, 64 * 1024, 1024 ** 3),
      timeMs: integer(env, 'INSPECTION_TIME_MS', 10_000, 100, 600_000),
      // Files above it are inspected in the background: publish answers validation_status pending.
      inlineMaxBytes: integer(env, 'INSPECTION_INLINE_MAX_BYTES', 64 * 1024 ** 2, 0, 5 * 1024 ** 4),
    },
  });
}

export const SETTINGS = Symbol('Settings');
