import * as fs from 'node:fs';
import { parse } from 'yaml';
import { ConfigError, loadSettings } from '../../src/config/settings';

/**
 * Issue 43: docker-compose.yml as written. No container runs here (no registry), so what can
 * be checked without one is: every image pinned, and the service's environment, as compose
 * would interpolate it for each documented way to start, accepted by the service's own
 * settings (or refused by name where the header says it is).
 */
const compose = parse(fs.readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, { image?: string; build?: string; environment?: Record<string, string>; deploy?: { replicas?: number } }>;
};

/** Compose's interpolation of ${VAR}, ${VAR:-default} and ${VAR:?error}. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const set = env[name] !== undefined && env[name] !== '';
    if (set) return env[name];
    if (op === '?') throw new Error(`compose refuses to start: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

const serviceEnv = (service: string, shell: Record<string, string>) =>
  Object.fromEntries(Object.entries(compose.services[service].environment ?? {}).map(([k, v]) => [k, interpolate(String(v), shell)]));

const secrets = { ADMIN_TOKEN: 'a'.repeat(48), WEBHOOK_ENCRYPTION_KEY: 'b'.repeat(64) };

describe('docker-compose.yml as written', () => {
  it('pins every image to a release', () => {
    const images = Object.entries(compose.services).filter(([, s]) => s.image).map(([name, s]) => [name, s.image!] as const);
    expect(images.length).toBeGreaterThanOrEqual(5);
    for (const [name, image] of images) {
      const tag = /:([^:/]+)$/.exec(image)?.[1];
      expect({ name, tag }).toEqual({ name, tag: expect.stringMatching(/^(?!latest$).*\d/) });
    }
  });

  it('starts with the sandbox, with Stripe test keys only, and in production only with Stripe', () => {
    const sandbox = loadSettings(serviceEnv('api', { ...secrets, NODE_ENV: 'development', PAYMENTS: 'sandbox' }));
    expect(sandbox.payments).toBe('sandbox');
    const stripeTest = loadSettings(serviceEnv('api', { ...secrets, STRIPE_SECRET_KEY_TEST: 'sk_test_x', STRIPE_WEBHOOK_SECRET_TEST: 'whsec_x' }));
    expect([stripeTest.nodeEnv, stripeTest.payments]).toEqual(['production', 'stripe']);
    expect(() => loadSettings(serviceEnv('api', secrets))).toThrow(ConfigError);
    expect(() => loadSettings(serviceEnv('api', secrets))).toThrow(/STRIPE_SECRET_KEY_TEST/);
    expect(() => serviceEnv('api', {})).toThrow(/set ADMIN_TOKEN/);
  });

  it('runs two API replicas behind the load balancer, believing one proxy hop, signing S3 URLs for the host', () => {
    expect(compose.services.api.deploy?.replicas).toBe(2);
    const api = loadSettings(serviceEnv('api', { ...secrets, NODE_ENV: 'development', PAYMENTS: 'sandbox' }));
    expect(api.workers).toBe(false);
    expect(api.trustProxy).toBe(1);
    expect(api.publicBaseUrl).toBe('http://localhost:8080');
    expect(api.s3).toMatchObject({ endpoint: 'http://minio:9000', publicEndpoint: 'http://localhost:9000' });
    const worker = loadSettings(serviceEnv('worker', { ...secrets, NODE_ENV: 'development', PAYMENTS: 'sandbox' }));
    expect(worker.workers).toBe(true);
    const nginx = fs.readFileSync('deploy/nginx.conf', 'utf8');
    expect(nginx).toMatch(new RegExp(`server api:${api.port};`));
    expect(nginx).toMatch(/listen 8080;/);
  });
});
