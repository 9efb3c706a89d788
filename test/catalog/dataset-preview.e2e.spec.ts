import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../support/app';
import { buy } from '../commerce/commerce-client';
import { sha256 } from './catalog-client';
import { writeLeRobotDataset } from '../support/lerobot-fixture';
import { ConsoleClient } from '../console/console-client';

/** Issue 41 items 4 and 5: the dataset's layout, and GET /v1/datasets/{id}/preview before purchase. */
describe('dataset preview', () => {
  let t: TestApp;
  let owner: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  let dir: string;
  let names: string[];
  let lerobot: { id: string; slug: string };
  let wide: Buffer;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'preview-'));
    // 2 episodes of 25 frames: more rows than a sample shows.
    names = writeLeRobotDataset(dir, 2, 25);
    // A wide table: 20 rows of 300 text columns of 100 characters, about 600 KiB as JSON, written by hyparquet-writer.
    const widePath = path.join(dir, 'wide.parquet');
    execFileSync(process.execPath, ['--input-type=module', '-e', `
      import { parquetWriteFile } from 'hyparquet-writer';
      parquetWriteFile({ filename: ${JSON.stringify(widePath)}, columnData: Array.from({ length: 300 }, (_, c) => ({
        name: 'c' + String(c).padStart(3, '0'), type: 'STRING', data: Array.from({ length: 20 }, (_, r) => String(r).padStart(3, '0') + 'x'.repeat(97)),
      })) });`], { cwd: path.resolve(__dirname, '../..') });
    wide = fs.readFileSync(widePath);
    t = await startTestApp();
    owner = await t.accountWithKey({ scopes: ['datasets:upload', 'datasets:read', 'listings:read'] });
    buyer = await t.accountWithKey({ scopes: ['datasets:read'] });
    lerobot = await publishedDataset('LeRobot Pick', 2500, names.map((name) => [name, fs.readFileSync(path.join(dir, name))]));
  });
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  const draft = async (title: string, price_cents: number, files: [string, Buffer][]) => {
    const created = await t.request('POST', '/v1/datasets', { key: owner.key, body: { title, price_cents } });
    expect(created.status).toBe(201);
    for (const [name, bytes] of files) {
      const minted = await t.request('POST', `/v1/datasets/${created.body.id}/shards`, { key: owner.key, body: { name, size: bytes.length } });
      expect((await t.storage('PUT', minted.body.upload_url, { payload: bytes, headers: minted.body.upload_headers })).status).toBe(200);
    }
    return created.body as { id: string; slug: string };
  };
  const publishedDataset = async (title: string, price_cents: number, files: [string, Buffer][]) => {
    const dataset = await draft(title, price_cents, files);
    const published = await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key });
    expect([published.status, published.body.validation_errors]).toEqual([200, []]);
    return dataset;
  };
  const preview = (id: string, key: string, query = '') => t.request('GET', `/v1/datasets/${id}/preview${query}`, { key });

  it('gives the dataset object a top-level layout naming the LeRobot layout and what it knows', async () => {
    const dataset = await t.request('GET', `/v1/datasets/${lerobot.slug}`, { key: buyer.key });
    expect(dataset.body.layout).toEqual({
      name: 'lerobot', robot_type: 'so100', fps: 30, episodes: 2, episode_files: 2, frames: 50,
      features: expect.objectContaining({ action: { dtype: 'float32', shape: [2] }, 'observation.images.front': { dtype: 'video', shape: [48, 64, 3] } }),
    });
  });

  it('previews a paid LeRobot dataset to a buyer who has not paid: summary, files with sha256 and inspection, 20 sample rows, and no URL', async () => {
    const res = await preview(lerobot.slug, buyer.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'dataset_preview', id: lerobot.id, has_more: false, layout: { name: 'lerobot', episodes: 2 } });
    expect(res.body.summary).toEqual({
      files: names.length,
      total_bytes: names.reduce((n, name) => n + fs.statSync(path.join(dir, name)).size, 0),
      episodes: 2, frames: 50, fps: 30, duration_s: 1.667,
      features: expect.objectContaining({ timestamp: { dtype: 'float32', shape: [1] } }),
      columns: [
        { name: 'timestamp', type: 'FLOAT' }, { name: 'frame_index', type: 'INT64' }, { name: 'episode_index', type: 'INT64' }, { name: 'action_x', type: 'FLOAT' },
      ],
      topics: null,
    });
    expect(res.body.files.map((f: any) => f.name)).toEqual(names);
    const episode = fs.readFileSync(path.join(dir, 'data/chunk-000/episode_000000.parquet'));
    expect(res.body.files[0]).toEqual({ name: 'data/chunk-000/episode_000000.parquet', size: episode.length, sha256: sha256(episode), format: 'parquet', inspection: expect.objectContaining({ format: 'parquet', rows: 25 }) });
    // The first tabular file's first 20 of its 25 rows; no still frame of the videos, and the answer says why.
    expect(res.body.sample).toMatchObject({ file: 'data/chunk-000/episode_000000.parquet', format: 'parquet', columns: ['timestamp', 'frame_index', 'episode_index', 'action_x'], total_rows: 25, truncated: false });
    expect(res.body.sample.rows).toHaveLength(20);
    expect(res.body.sample.rows[3]).toEqual({ timestamp: expect.closeTo(0.1, 5), frame_index: 3, episode_index: 0, action_x: expect.closeTo(Math.sin(3), 5) });
    expect(res.body.sample.notes).toEqual([expect.stringContaining('No still frame')]);
    expect(JSON.stringify(res.body)).not.toContain('http');

    // Never a shard URL without paying; after paying, the same preview and the URL.
    const shard = await t.request('GET', `/v1/datasets/${lerobot.id}/shards/meta/info.json`, { key: buyer.key });
    expect([shard.status, shard.body.error.code]).toEqual([402, 'purchase_required']);
    await buy(t, buyer.key, lerobot.id);
    expect((await preview(lerobot.id, buyer.key)).body).toEqual(res.body);
    expect((await t.request('GET', `/v1/datasets/${lerobot.id}/shards/meta/info.json`, { key: buyer.key })).status).toBe(200);
  });

  it('pages the files: limit=, after= a name, prefix=', async () => {
    const first = await preview(lerobot.id, buyer.key, '?limit=2');
    expect([first.body.files.map((f: any) => f.name), first.body.has_more]).toEqual([names.slice(0, 2), true]);
    const next = await preview(lerobot.id, buyer.key, `?limit=2&after=${encodeURIComponent(names[1])}`);
    expect([next.body.files.map((f: any) => f.name), next.body.has_more]).toEqual([names.slice(2, 4), true]);
    const videos = await preview(lerobot.id, buyer.key, '?prefix=videos/');
    expect(videos.body.files.map((f: any) => f.name)).toEqual(names.filter((n) => n.startsWith('videos/')));
    // The summary and sample are the whole dataset's whatever the page.
    expect(videos.body.summary.files).toBe(names.length);
  });

  it('holds the sample of a wide table to 256 KiB, dropping rows and saying so', async () => {
    const dataset = await publishedDataset('Wide Table', 0, [['wide.parquet', wide]]);
    const res = await preview(dataset.id, buyer.key);
    expect(res.body.layout).toEqual({ name: 'files' });
    expect(res.body.summary).toMatchObject({ files: 1, episodes: null, columns: expect.arrayContaining([{ name: 'c299', type: 'UTF8' }]) });
    const sample = res.body.sample;
    expect(sample).toMatchObject({ file: 'wide.parquet', total_rows: 20, truncated: true });
    expect(Buffer.byteLength(JSON.stringify(sample))).toBeLessThanOrEqual(256 * 1024);
    expect(sample.rows.length).toBeGreaterThan(0);
    expect(sample.rows.length).toBeLessThan(20);
    expect(sample.rows[0].c000).toBe('000' + 'x'.repeat(97));
    expect(sample.notes).toEqual([`Only the first ${sample.rows.length} of 20 rows are shown: the sample is held to 256 KiB.`]);
  });

  it('samples the first rows of a CSV file', async () => {
    const csv = 'step,joint,"note"\n' + Array.from({ length: 30 }, (_, i) => `${i},${i / 10},"a, ""quoted"" ${i}"`).join('\n') + '\n';
    const dataset = await publishedDataset('CSV Log', 0, [['log.csv', Buffer.from(csv)]]);
    const sample = (await preview(dataset.id, buyer.key)).body.sample;
    expect(sample).toMatchObject({ file: 'log.csv', format: 'csv', columns: ['step', 'joint', 'note'], truncated: false, notes: [] });
    expect(sample.rows).toHaveLength(20);
    expect(sample.rows[2]).toEqual({ step: '2', joint: '0.2', note: 'a, "quoted" 2' });
  });

  it("shows the owner a draft's landed files before publishing; to anyone else, another mode, or an unknown id it is 404", async () => {
    const info = fs.readFileSync(path.join(dir, 'meta/info.json'));
    const unpublished = await draft('Not Yet', 0, [['meta/info.json', info]]);
    const own = await preview(unpublished.id, owner.key);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ layout: null, sample: null, summary: { files: 1, total_bytes: info.length }, files: [{ name: 'meta/info.json', size: info.length, sha256: sha256(info), format: null, inspection: null }] });
    expect((await preview(unpublished.id, buyer.key)).body.error.code).toBe('not_found');
    const live = await t.accountWithKey({ mode: 'live', scopes: ['datasets:read'] });
    expect((await preview(lerobot.id, live.key)).status).toBe(404);
    expect((await preview('ds_missing', buyer.key)).status).toBe(404);
  });

  it("shows the preview on the console's listing page: a chart of a numeric column over the sample and the rows as a table", async () => {
    const browser = new ConsoleClient(t, '10.4.1.7');
    expect((await browser.signIn('creator', owner.key)).status).toBe(303);
    const page = await browser.get(`/console/listings/${lerobot.id}`);
    expect(page.status).toBe(200);
    const section = /<section class="panel" data-preview[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? '';
    expect(section).toContain('Preview, as buyers see it before paying');
    // The first numeric column that is not an index, over the 20 sample rows, drawn by the page script with uPlot.
    const spec = JSON.parse((/data-chart="([^"]*)"/.exec(section)?.[1] ?? '{}').replace(/&quot;/g, '"'));
    expect([spec.series[0].label, spec.x.length, spec.time]).toEqual(['timestamp', 20, false]);
    // The text alternative: the same rows as a table.
    const table = /<table data-sample>[\s\S]*?<\/table>/.exec(section)?.[0] ?? '';
    expect(table).toContain('the first 20 rows of <code>data/chunk-000/episode_000000.parquet</code> (of 25)');
    expect(table.match(/<tr>/g)).toHaveLength(21);
    expect(section).toContain('No still frame');
  });

  it('answers 400 to an unknown query parameter and to a bad after= or limit=', async () => {
    const unknown = await preview(lerobot.id, buyer.key, '?rows=1000');
    expect([unknown.status, unknown.body.error.message]).toEqual([400, expect.stringContaining('rows')]);
    const after = await preview(lerobot.id, buyer.key, '?after=../x');
    expect([after.status, after.body.error.message]).toEqual([400, expect.stringContaining('"after"')]);
    expect((await preview(lerobot.id, buyer.key, '?limit=many')).status).toBe(400);
  });
});
