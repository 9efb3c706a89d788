import * as path from 'node:path';
import { ConfigError, loadSettings } from '../../src/config/settings';

function configError(env: Record<string, string>, variable: string) {
  let caught: unknown;
  try {
    loadSettings(env);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect((caught as Error).message).toContain(variable);
}

describe('loadSettings', () => {
  it('has the defaults of decisions section 1 for an empty environment', () => {
    const s = loadSettings({});
    expect(s.port).toBe(3000);
    expect(s.host).toBe('127.0.0.1');
    expect(s.publicBaseUrl).toBe('http://127.0.0.1:3000');
    expect(s.dataDir).toBe(path.resolve('./data'));
    expect(s.databaseUrl).toBeUndefined();
    expect(s.adminToken).toBeUndefined();
    expect(s.canonicalHost).toBeUndefined();
    expect(s.payments).toBe('sandbox');
    expect(s.platformFeeBps).toBe(1500);
    expect(s.webhookRetrySchedule).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(s.webhookRetrySchedule).toHaveLength(8);
    expect(s.s3).toBeUndefined();
    expect(s.readyMaxLagSeconds).toBe(30);
    expect(s.rebuildPausePercent).toBe(1000);
  });

  it('takes EVENTSTORE_URL as an EventStoreDB connection string, refusing anything else by name', () => {
    expect(loadSettings({ EVENTSTORE_URL: 'esdb://localhost:2113?tls=false' }).eventStoreUrl).toBe('esdb://localhost:2113?tls=false');
    expect(loadSettings({ EVENTSTORE_URL: 'kurrentdb+discover://admin:changeit@cluster.local:2113' }).eventStoreUrl).toBeDefined();
    expect(loadSettings({}).eventStoreUrl).toBeUndefined();
    expect(() => loadSettings({ EVENTSTORE_URL: 'http://localhost:2113' })).toThrow(ConfigError);
    expect(() => loadSettings({ EVENTSTORE_URL: 'localhost:2113' })).toThrow(/EVENTSTORE_URL/);
    expect(() => loadSettings({ EVENTSTORE_URL: 'http://admin:secret@localhost:2113' })).toThrow(/admin:\*\*\*@/);
  });

  it('cuts slow clients off by default, and reads the HTTP timeouts it is given', () => {
    expect(loadSettings({}).http).toEqual({ requestTimeoutMs: 60_000, headersTimeoutMs: 10_000, idleTimeoutMs: 30_000, keepAliveTimeoutMs: 72_000 });
    const s = loadSettings({ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_IDLE_TIMEOUT_MS: '3000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '4000' });
    expect(s.http).toEqual({ requestTimeoutMs: 5000, headersTimeoutMs: 2000, idleTimeoutMs: 3000, keepAliveTimeoutMs: 4000 });
  });

  it('reads TRUST_PROXY as off, every hop, a hop count or addresses and CIDRs, naming what it cannot use', () => {
    expect(loadSettings({}).trustProxy).toBe(false);
    expect(loadSettings({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadSettings({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadSettings({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadSettings({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
    for (const bad of ['yes', '10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/1', '::1/129']) configError({ TRUST_PROXY: bad }, 'TRUST_PROXY');
  });

  it('derives PUBLIC_BASE_URL from PORT and trims a trailing slash from a given one', () => {
    expect(loadSettings({ PORT: '8080' }).publicBaseUrl).toBe('http://127.0.0.1:8080');
    expect(loadSettings({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe('https://api.example.com');
  });

  it('reads the inference upstream, and names the variable it cannot use', () => {
    expect(loadSettings({}).inferenceUpstream).toBeUndefined();
    expect(loadSettings({ INFERENCE_UPSTREAM_URL: 'http://127.0.0.1:11434/v1/', INFERENCE_UPSTREAM_KEY: 'sk-x' }).inferenceUpstream).toEqual({
      url: 'http://127.0.0.1:11434/v1',
      apiKey: 'sk-x',
      models: {},
      timeoutMs: 60_000,
    });
    const mapped = loadSettings({
      INFERENCE_UPSTREAM_URL: 'http://127.0.0.1:8000/v1',
      INFERENCE_UPSTREAM_MODELS: 'svc-fast-8b=llama3.1:8b, svc-reason-70b=meta-llama/Llama-3.3-70B-Instruct',
      INFERENCE_UPSTREAM_TIMEOUT_MS: '5000',
    }).inferenceUpstream;
    expect(mapped).toMatchObject({ models: { 'svc-fast-8b': 'llama3.1:8b', 'svc-reason-70b': 'meta-llama/Llama-3.3-70B-Instruct' }, timeoutMs: 5000 });
    expect(() => loadSettings({ INFERENCE_UPSTREAM_URL: 'http://h/v1', INFERENCE_UPSTREAM_MODELS: 'svc-fast-8b' })).toThrow(/INFERENCE_UPSTREAM_MODELS must be id=upstream_model/);
    expect(() => loadSettings({ INFERENCE_UPSTREAM_URL: 'not a url' })).toThrow(/INFERENCE_UPSTREAM_URL must be a URL/);
    expect(() => loadSettings({ INFERENCE_UPSTREAM_URL: 'ftp://host/v1' })).toThrow(/INFERENCE_UPSTREAM_URL must be an http/);
    expect(() => loadSettings({ INFERENCE_UPSTREAM_KEY: 'sk-x' })).toThrow(/INFERENCE_UPSTREAM_URL is not/);
  });

  it('reads the values it is given', () => {
    const s = loadSettings({
      PORT: '4000',
      HOST: '0.0.0.0',
      PAYMENTS: 'stripe',
      STRIPE_SECRET_KEY_TEST: 'sk_test_1',
      STRIPE_WEBHOOK_SECRET_TEST: 'whsec_1',
      STRIPE_API_BASE: 'http://127.0.0.1:12111',
      WEBHOOK_RETRY_SCHEDULE: '0, 10,60',
      CANONICAL_HOST: 'www.example.com',
      PLATFORM_FEE_BPS: '1000',
      READY_MAX_LAG_SECONDS: '5',
      REBUILD_PAUSE_PERCENT: '0',
    });
    expect(s).toMatchObject({ port: 4000, host: '0.0.0.0', payments: 'stripe', canonicalHost: 'www.example.com', platformFeeBps: 1000, readyMaxLagSeconds: 5, rebuildPausePercent: 0 });
    expect(s.webhookRetrySchedule).toEqual([0, 10, 60]);
    expect(s.stripe).toEqual({ test: { secretKey: 'sk_test_1', webhookSecret: 'whsec_1' }, live: undefined, apiBase: { protocol: 'http', host: '127.0.0.1', port: 12111 } });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PAYMENTS: 'paypal' }, 'PAYMENTS'],
    [{ WEBHOOK_RETRY_SCHEDULE: '1,x' }, 'WEBHOOK_RETRY_SCHEDULE'],
    [{ CANONICAL_HOST: 'example.com' }, 'CANONICAL_HOST'],
    [{ PLATFORM_FEE_BPS: '10001' }, 'PLATFORM_FEE_BPS'],
    [{ PAYMENTS: 'stripe' }, 'STRIPE_SECRET_KEY_TEST'],
    [{ STRIPE_SECRET_KEY_LIVE: 'sk_live_1' }, 'STRIPE_WEBHOOK_SECRET_LIVE'],
    [{ STRIPE_API_BASE: 'not a url' }, 'STRIPE_API_BASE'],
    [{ NODE_ENV: 'production' }, 'PAYMENTS'],
    [{ HTTP_REQUEST_TIMEOUT_MS: '0' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '6000' }, 'HTTP_HEADERS_TIMEOUT_MS'],
    [{ HTTP_IDLE_TIMEOUT_MS: 'soon' }, 'HTTP_IDLE_TIMEOUT_MS'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: '10' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'],
    [{ WORKERS: 'maybe' }, 'WORKERS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ READY_MAX_LAG_SECONDS: '0' }, 'READY_MAX_LAG_SECONDS'],
    [{ READY_MAX_LAG_SECONDS: '1.5' }, 'READY_MAX_LAG_SECONDS'],
    [{ REBUILD_PAUSE_PERCENT: '-5' }, 'REBUILD_PAUSE_PERCENT'],
    [{ REBUILD_PAUSE_PERCENT: '20000' }, 'REBUILD_PAUSE_PERCENT'],
    [{ WEBHOOK_ENCRYPTION_KEY: 'too-short' }, 'WEBHOOK_ENCRYPTION_KEY'],
    [{ NODE_ENV: 'production', PAYMENTS: 'stripe', STRIPE_SECRET_KEY_TEST: 'sk_test_1', STRIPE_WEBHOOK_SECRET_TEST: 'whsec_1' }, 'WEBHOOK_ENCRYPTION_KEY'],
  ])('%j throws a ConfigError naming %s', (env, variable) => {
    configError(env as Record<string, string>, variable);
  });

  it('reads LOG_LEVEL as one of pino\'s levels, info by default', () => {
    expect(loadSettings({}).logLevel).toBe('info');
    expect(loadSettings({ LOG_LEVEL: 'WARN' }).logLevel).toBe('warn');
    expect(loadSettings({ LOG_LEVEL: 'silent' }).logLevel).toBe('silent');
  });

  it('reads WORKERS as a boolean: no, 0, false and off turn the workers off', () => {
    for (const off of ['no', '0', 'false', 'OFF']) expect(loadSettings({ WORKERS: off }).workers).toBe(false);
    for (const on of ['yes', '1', 'true']) expect(loadSettings({ WORKERS: on }).workers).toBe(true);
    expect(loadSettings({}).workers).toBe(true);
  });

  it('takes a 32-byte webhook encryption key as hex or base64', () => {
    expect(loadSettings({ WEBHOOK_ENCRYPTION_KEY: 'ab'.repeat(32) }).webhookEncryptionKey).toBe('ab'.repeat(32));
    const base64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadSettings({ WEBHOOK_ENCRYPTION_KEY: base64 }).webhookEncryptionKey).toBe(base64);
  });
});
