import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/main';
import { startTestApp, TestApp } from '../support/app';
import { freePort } from '../support/cli';
import { onnxModel, safetensorsOfSize } from '../support/asset-files';

/** svc upload / svc models publish against a listening service, as a creator's script would run them. */
describe('svc upload and svc models publish', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestApp({ env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen(port, '127.0.0.1');
    const { key } = await t.accountWithKey({ scopes: ['models:upload', 'models:read'] });
    env = { SVC_URL: `http://127.0.0.1:${port}`, SVC_API_KEY: key };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const svc = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, (s) => (stdout += s), (s) => (stderr += s), env);
    return { code, stdout, stderr };
  };

  it('uploads a file, then publishes a model from a JSON body', async () => {
    const file = path.join(dir, 'gripper.safetensors');
    fs.writeFileSync(file, safetensorsOfSize(300_000));
    const uploaded = await svc('upload', file, '--json');
    expect(uploaded.code).toBe(0);
    const grant = JSON.parse(uploaded.stdout);
    expect(grant).toEqual({
      storage_path: expect.stringMatching(/^user\/acct_\w+\/\d+-gripper\.safetensors$/),
      file_name: 'gripper.safetensors',
      file_size: 300_000,
      file_extension: '.safetensors',
    });

    const body = path.join(dir, 'model.json');
    fs.writeFileSync(body, JSON.stringify({ title: 'Gripper Weights', type: 'onnx-model', license: 'MIT', ...grant }));
    const published = await svc('models', 'publish', body, '--json');
    expect(published.code).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ slug: 'gripper-weights', file: { name: 'gripper.safetensors', size: 300_000 } });
  });

  it('uploads and publishes in one step with --file', async () => {
    const file = path.join(dir, 'nav.onnx');
    fs.writeFileSync(file, onnxModel());
    const body = path.join(dir, 'nav.json');
    fs.writeFileSync(body, JSON.stringify({ title: 'Nav One Step', type: 'onnx-model', license: 'MIT', price_cents: 500 }));
    const res = await svc('models', 'publish', body, '--file', file);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^published nav-one-step \(lst_\w+\): Nav One Step, 500 usd cents\n$/);
  });

  it('exits non-zero with the API error code on bad input, publishing nothing', async () => {
    const exe = path.join(dir, 'tool.exe');
    fs.writeFileSync(exe, 'MZ');
    const refused = await svc('upload', exe, '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error.code).toBe('validation_failed');

    const body = path.join(dir, 'cheap.json');
    fs.writeFileSync(body, JSON.stringify({ title: 'Too Cheap', type: 'onnx-model', license: 'MIT', price_cents: 50 }));
    const cheap = await svc('models', 'publish', body, '--file', path.join(dir, 'nav.onnx'));
    expect(cheap.code).toBe(1);
    expect(cheap.stderr).toContain('price_too_low');
    const list = await t.request('GET', '/v1/models?q=cheap', { key: env.SVC_API_KEY });
    expect(list.body.items).toEqual([]);

    const noKey = await runCli(['upload', exe], () => undefined, () => undefined, { SVC_URL: env.SVC_URL });
    expect(noKey).toBe(2);
  });

  it('uploads a directory as dataset shards, several at once, and resumes: shards already landed are skipped', async () => {
    const { key } = await t.accountWithKey({ scopes: ['datasets:upload', 'datasets:read'] });
    const draft = await t.request('POST', '/v1/datasets', { key, body: { title: 'Bin Picking Episodes', type: 'dataset', price_cents: 0 } });
    expect(draft.status).toBe(201);
    const shards = fs.mkdtempSync(path.join(dir, 'episodes-'));
    for (const [name, size] of [['ep-000.mcap', 70_000], ['ep-001.mcap', 5], ['ep-002.mcap', 123_456]] as const) fs.writeFileSync(path.join(shards, name), Buffer.alloc(size, 7));
    const asCreator = (...argv: string[]) => runCli(argv, () => undefined, () => undefined, { ...env, SVC_API_KEY: key });
    const run = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runCli(argv, (s) => (out += s), (s) => (err += s), { ...env, SVC_API_KEY: key });
      return { code, result: code === 0 ? JSON.parse(out) : err };
    };

    const first = await run('datasets', 'upload', shards, '--dataset', draft.body.slug, '--parallel', '2', '--json');
    expect(first).toEqual({ code: 0, result: { dataset: draft.body.slug, uploaded: ['ep-000.mcap', 'ep-001.mcap', 'ep-002.mcap'], skipped: 0, count: 3, total_bytes: 193_461 } });
    const listed = await t.request('GET', `/v1/datasets/${draft.body.id}/shards`, { key });
    expect(listed.body.items.map((s: any) => [s.name, s.size])).toEqual([['ep-000.mcap', 70_000], ['ep-001.mcap', 5], ['ep-002.mcap', 123_456]]);

    // Run again after one more file arrived: only that one is sent.
    fs.writeFileSync(path.join(shards, 'ep-003.mcap'), Buffer.alloc(10, 1));
    const again = await run('datasets', 'upload', shards, '--dataset', draft.body.id, '--json');
    expect(again).toEqual({ code: 0, result: expect.objectContaining({ uploaded: ['ep-003.mcap'], skipped: 3, count: 4 }) });

    expect(await asCreator('datasets', 'upload', shards, '--dataset', draft.body.id, '--parallel', '0')).toBe(2);
    expect(await asCreator('datasets', 'upload', path.join(dir, 'no-such-dir'), '--dataset', draft.body.id)).toBe(2);
    expect(await asCreator('datasets', 'upload', shards)).toBe(2); // --dataset is required
  });
});

