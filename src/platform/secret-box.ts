import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Settings } from '../config/settings';
import { ConfigError, decodeKey32 } from '../config/settings';

const FORMAT = 'v1';

/**
 * Seals endpoint signing secrets with AES-256-GCM under the service key. The service must
 * sign with the secret, so it cannot keep only a hash; the endpoint id is bound in as
 * associated data so a sealed secret cannot be moved to another endpoint.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new ConfigError('the webhook encryption key must be 32 bytes');
  }

  seal(plaintext: string, endpointId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(endpointId, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
  }

  open(sealed: string, endpointId: string): string {
    const [format, iv, tag, body] = sealed.split(':');
    if (format !== FORMAT || !iv || !tag || body === undefined) throw new Error('not a sealed webhook secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(endpointId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}

/**
 * WEBHOOK_ENCRYPTION_KEY, required in production; elsewhere DATA_DIR/webhook_encryption_key,
 * created on first start (like the admin token). Losing it makes every stored secret unusable.
 */
export function resolveWebhookKey(settings: Settings): Buffer {
  if (settings.webhookEncryptionKey) return decodeKey32(settings.webhookEncryptionKey, 'WEBHOOK_ENCRYPTION_KEY');
  const file = path.join(settings.dataDir, 'webhook_encryption_key');
  if (fs.existsSync(file)) return decodeKey32(fs.readFileSync(file, 'utf8'), file);
  fs.mkdirSync(settings.dataDir, { recursive: true });
  const key = randomBytes(32);
  fs.writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  return key;
}
