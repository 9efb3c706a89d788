import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSettings } from '../../src/config/settings';
import { resolveWebhookKey, SecretBox } from '../../src/platform/secret-box';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, for the same endpoint only', () => {
    const sealed = box.seal('whsec_test_abc', 'we_1');
    expect(sealed).not.toContain('whsec_test_abc');
    expect(box.open(sealed, 'we_1')).toBe('whsec_test_abc');
    expect(() => box.open(sealed, 'we_2')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'we_1')).toThrow();
    expect(box.seal('whsec_test_abc', 'we_1')).not.toBe(sealed);
  });

  it('takes the key from the environment, requires it in production, and otherwise generates it once', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-key-'));
    try {
      const hex = randomBytes(32).toString('hex');
      expect(resolveWebhookKey(loadSettings({ DATA_DIR: dir, WEBHOOK_ENCRYPTION_KEY: hex })).toString('hex')).toBe(hex);
      expect(() => resolveWebhookKey(loadSettings({ DATA_DIR: dir, WEBHOOK_ENCRYPTION_KEY: 'short' }))).toThrow(/32 bytes/);
      expect(() => resolveWebhookKey(loadSettings({ DATA_DIR: dir, NODE_ENV: 'production', PAYMENTS: 'stripe', STRIPE_SECRET_KEY_LIVE: 'sk_live_1', STRIPE_WEBHOOK_SECRET_LIVE: 'whsec_1' }))).toThrow(/required in production/);
      const first = resolveWebhookKey(loadSettings({ DATA_DIR: dir }));
      expect(resolveWebhookKey(loadSettings({ DATA_DIR: dir }))).toEqual(first);
      expect(fs.statSync(path.join(dir, 'webhook_encryption_key')).mode & 0o777).toBe(0o600);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
