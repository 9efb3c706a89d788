import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import puppeteer, { Browser } from 'puppeteer-core';
import { startTestApp, TestApp } from '../support/app';

/**
 * GET /docs renders in a real browser: the system Chromium (Debian's `chromium` package),
 * driven by puppeteer-core, which never downloads a browser. CHROMIUM_PATH overrides where
 * it is looked for; DOCS_SCREENSHOT keeps the screenshot.
 */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

describe('GET /docs in headless Chromium (issue 15)', () => {
  let t: TestApp;
  let browser: Browser | undefined;
  let baseUrl: string;

  beforeAll(async () => {
    // No silent skip: without the browser this test fails and says how to get one.
    if (!fs.existsSync(CHROMIUM)) {
      throw new Error(`Chromium not found at ${CHROMIUM}: install it with "apt-get update && apt-get install -y chromium", or set CHROMIUM_PATH to a Chromium binary.`);
    }
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    // --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders the operations from /v1/openapi.json, with no request leaving the machine', async () => {
    const page = await browser!.newPage();
    const offHost: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(baseUrl) && !request.url().startsWith('data:')) offHost.push(request.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));

    await page.goto(`${baseUrl}/docs`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.opblock', { timeout: 20_000 });

    // DOCS_SCREENSHOT=file.png keeps the screenshot (a CI artifact, or to look at).
    const screenshot = process.env.DOCS_SCREENSHOT || path.join(os.tmpdir(), `svc-docs-${process.pid}.png`);
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(fs.readFileSync(screenshot).subarray(1, 4).toString()).toBe('PNG');
    if (!process.env.DOCS_SCREENSHOT) fs.rmSync(screenshot);

    // Swagger UI breaks long paths with zero-width spaces.
    const text = String(await page.evaluate('document.body.innerText')).replace(/\u200b/g, '');
    for (const route of ['/v1/me', '/v1/purchases', '/v1/models/{idOrSlug}', '/v1/chat/completions']) expect(text).toContain(route);
    expect(await page.$$eval('.opblock', (blocks) => blocks.length)).toBeGreaterThan(30);
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
  });
});
