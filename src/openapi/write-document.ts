import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createApp } from '../app';
import { loadSettings } from '../config/settings';
import { buildOpenApiDocument } from './document';

/**
 * Writes the OpenAPI document of the app to the file named by the first argument (stdout
 * without one), booting the app on a throwaway PGlite data directory without listening.
 * npm run lint:openapi lints what this writes.
 */
async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-'));
  try {
    const app = await createApp(loadSettings({ DATA_DIR: dataDir, WORKERS: 'false', NODE_ENV: 'development' }), { logger: ['error'] });
    const text = JSON.stringify(buildOpenApiDocument(app), null, 2) + '\n';
    await app.close();
    if (process.argv[2]) fs.writeFileSync(process.argv[2], text);
    else process.stdout.write(text);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
