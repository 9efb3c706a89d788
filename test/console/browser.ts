import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import type { TestApp } from '../support/app';

/**
 * The console in a real browser: Debian's Chromium driven by puppeteer-core (as the /docs
 * test), axe-core run in the page, screenshots at 1280x800 into docs/console/ (the README
 * links them).
 */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const SCREENSHOTS = path.join(__dirname, '..', '..', 'docs', 'console');
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleBrowser {
  base: string;
  browser: Browser;
  /** Every dialog any page opened (a confirm is accepted; anything else is a script that should not have run). */
  dialogs: string[];
  open(): Promise<{ page: Page; errors: string[] }>;
  signIn(page: Page, as: 'operator' | 'creator', secret: string): Promise<void>;
  /** Loads a page: 200, its charts drawn, its screenshot written, no serious or critical axe violation, no console error. */
  visit(page: Page, errors: string[], url: string, screenshot: string): Promise<void>;
  close(): Promise<void>;
}

/** Serves the app on a port and starts Chromium; fails (never skips) without it. */
export async function consoleBrowser(t: TestApp): Promise<ConsoleBrowser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it with "apt-get update && apt-get install -y chromium", or set CHROMIUM_PATH.`);
  }
  await t.app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  // --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const dialogs: string[] = [];

  const open = async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('dialog', async (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      await (dialog.type() === 'confirm' ? dialog.accept() : dialog.dismiss());
    });
    return { page, errors };
  };

  const signIn = async (page: Page, as: 'operator' | 'creator', secret: string) => {
    await page.goto(`${base}/console/sign-in`, { waitUntil: 'load' });
    await page.type(as === 'operator' ? '#admin_token' : '#api_key', secret);
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(`form:has(input[name="as"][value="${as}"]) button[type="submit"]`)]);
  };

  const visit = async (page: Page, errors: string[], url: string, screenshot: string) => {
    const res = await page.goto(`${base}${url}`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    if (await page.$('[data-chart]')) await charts(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, `${screenshot}.png`) });
    expect(await axe(page)).toEqual([]);
    expect(errors).toEqual([]);
  };

  return {
    base,
    browser,
    dialogs,
    open,
    signIn,
    visit,
    close: async () => {
      await browser.close();
    },
  };
}

/** Runs axe-core in the page; answers the serious and critical violations. */
export async function axe(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Each chart on the page, in order: the points it was given and whether its canvas holds any drawn pixel. */
export async function charts(page: Page): Promise<{ points: number; painted: boolean }[]> {
  await page.waitForFunction(`[...document.querySelectorAll('[data-chart]')].every((el) => el.hasAttribute('data-drawn'))`, { timeout: 10_000 });
  return page.$$eval('[data-chart]', (els) =>
    els.map((el) => {
      const canvas = el.querySelector('canvas');
      const pixels = canvas?.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? new Uint8ClampedArray();
      let painted = false;
      for (let i = 3; i < pixels.length && !painted; i += 4) painted = pixels[i] > 0;
      return { points: Number(el.getAttribute('data-drawn')), painted };
    }),
  );
}

/**
 * What a bar chart shows at one x: whether the whole column of that x lies inside the plot
 * (not clipped at an edge), and the series whose colour is painted in it, read from the
 * canvas's pixels along a row a little above the zero line.
 */
export async function barsAt(page: Page, chart: number, xIndex: number): Promise<{ inside: boolean; painted: string[] }> {
  return page.$$eval(
    '[data-chart]',
    (els, [i, at]) => {
      const u = (els[i] as any).chart;
      const ctx = u.ctx;
      const x = u.data[0];
      const step = x.length > 1 ? u.valToPos(x[1], 'x', true) - u.valToPos(x[0], 'x', true) : 20;
      const center = u.valToPos(x[at], 'x', true);
      const left = Math.round(center - step / 2);
      const right = Math.round(center + step / 2);
      const y = Math.round(u.valToPos(0, 'y', true)) - 3;
      const row = ctx.getImageData(Math.max(0, left), y, Math.max(1, Math.min(u.ctx.canvas.width, right) - Math.max(0, left)), 1).data;
      const painted: string[] = [];
      u.series.slice(1).forEach((series: any) => {
        const hex = String(series._stroke ?? series.stroke()).slice(1, 7);
        const [r, g, b] = [0, 2, 4].map((o) => parseInt(hex.slice(o, o + 2), 16));
        for (let p = 0; p < row.length; p += 4) if (row[p] === r && row[p + 1] === g && row[p + 2] === b) return void painted.push(series.label);
      });
      return { inside: left >= u.bbox.left && right <= u.bbox.left + u.bbox.width, painted };
    },
    [chart, xIndex] as const,
  );
}

/** The width in CSS pixels a chart is drawn at. */
export async function chartWidth(page: Page, chart: number): Promise<number> {
  return page.$$eval('[data-chart]', (els, i) => (els[i] as any).chart.width as number, chart);
}

/** How far the page scrolls sideways at this window width (0: it does not), with a screenshot of it there. */
export async function sidewaysAt(page: Page, width: number, screenshot?: string): Promise<number> {
  await page.setViewport({ width, height: 800 });
  await new Promise((resolve) => setTimeout(resolve, 250)); // the charts' redraw after a resize (100 ms debounce)
  const over = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
  if (screenshot) await page.screenshot({ path: path.join(SCREENSHOTS, `${screenshot}.png`) });
  await page.setViewport({ width: 1280, height: 800 });
  return over;
}

/** The data a chart was drawn from (its series' values), by its position on the page. */
export async function chartData(page: Page, index: number): Promise<{ x: number[]; series: { label: string; values: (number | null)[] }[] }> {
  return page.$$eval('[data-chart]', (els, i) => JSON.parse(els[i].getAttribute('data-chart')!), index);
}

/** The text of the page as a reader sees it. */
export async function textOf(page: Page): Promise<string> {
  return String(await page.evaluate('document.body.innerText'));
}
