import { ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/main';
import { startTestApp, TestApp } from '../support/app';
import { freePort } from '../support/cli';
import { onExternalS3 } from '../storage/s3-server';
import { modelBody } from './catalog-client';
import { onnxModel, safetensorsOfSize } from '../support/asset-files';

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const SVC = path.resolve('bin/svc.js');

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** What the proxy does with a request: pass it on, hold it unanswered, pass it on but hold the answer back, or answer this status itself. */
type Verdict = 'pass' | 'hold' | 'swallow' | number;

/**
 * svc upload, svc models publish --file and svc datasets upload of files above the multipart
 * threshold (5 MiB parts here): parts in parallel, retries, and resuming after a killed run.
 * The interrupted runs are the built CLI (bin/svc.js over dist/: `node bin/build.js` first)
 * SIGKILLed once its state file shows a part done. The app is reached through a proxy in
 * this test (PUBLIC_BASE_URL) that sees every part PUT of the local store and can hold one
 * back or answer it with an error, so an interruption lands between parts every time; on
 * an external S3 server the parts bypass the proxy, and the tests that need it are skipped.
 */
describe('svc uploads in parts', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let cache: string;
  let proxy: http.Server;
  let verdict: (partNumber: number | undefined, request: http.IncomingMessage) => Verdict = () => 'pass';
  const held: http.ServerResponse[] = [];
  const seen: string[] = [];
  const children: ChildProcess[] = [];
  const savedCache = process.env.XDG_CACHE_HOME;

  beforeAll(async () => {
    if (!fs.existsSync(path.resolve('dist/clients/typescript/src/uploads.js'))) throw new Error('dist/ has no built SDK uploader: run "node bin/build.js" first');
    const [appPort, proxyPort] = [await freePort(), await freePort()];
    const base = `http://127.0.0.1:${proxyPort}`;
    proxy = http.createServer((req, res) => {
      const url = new URL(req.url!, base);
      const part = url.searchParams.get('part_number');
      seen.push(`${req.method} ${url.pathname}${part ? ` part ${part}` : ''}`);
      const answer = verdict(part ? Number(part) : undefined, req);
      if (answer === 'hold') return void held.push(res);
      if (typeof answer === 'number') {
        req.resume();
        req.on('end', () => res.writeHead(answer, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: `injected_${answer}`, message: 'injected by the test proxy' } })));
        return;
      }
      const upstream = http.request({ host: '127.0.0.1', port: appPort, method: req.method, path: req.url, headers: req.headers }, (answered) => {
        if (answer === 'swallow') {
          answered.resume();
          answered.on('end', () => seen.push(`swallowed ${answered.statusCode}`));
          return void held.push(res);
        }
        res.writeHead(answered.statusCode!, answered.headers);
        answered.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.on('error', () => upstream.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
    t = await startTestApp({
      env: { PORT: String(appPort), PUBLIC_BASE_URL: base, UPLOAD_MULTIPART_THRESHOLD: String(PART), UPLOAD_PART_SIZE: String(PART) },
    });
    await t.app.listen(appPort, '127.0.0.1');
    const { key } = await t.accountWithKey({ scopes: ['models:upload', 'models:read', 'datasets:upload', 'datasets:read'] });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-multipart-'));
    cache = path.join(dir, 'cache');
    // The CLI finds its state files under XDG_CACHE_HOME: in this process, and in the children it starts.
    process.env.XDG_CACHE_HOME = cache;
    env = { SVC_URL: base, SVC_API_KEY: key };
  });
  afterEach(() => {
    // A test that failed halfway leaves no CLI running.
    children.splice(0).forEach((child) => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    verdict = () => 'pass';
    held.splice(0).forEach((res) => res.destroy());
    seen.length = 0;
  });
  afterAll(async () => {
    if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedCache;
    await t?.close();
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const svc = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, (s) => (stdout += s), (s) => (stderr += s), env);
    return { code, stdout, stderr };
  };
  /** The built CLI in a child process, as a creator's shell runs it. */
  const spawnSvc = (...argv: string[]): ChildProcess => {
    const child = spawn(process.execPath, [SVC, ...argv], { env: { ...process.env, ...env, XDG_CACHE_HOME: cache }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    return child;
  };
  const finished = (child: ChildProcess) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk) => (stdout += chunk));
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  /** The resume state of a file (the CLI names it by a hash of file, target, API and key), or a path where none is. */
  const stateFileOf = (file: string) => {
    const folder = path.join(cache, 'svc', 'uploads');
    const names = fs.existsSync(folder) ? fs.readdirSync(folder).filter((n) => n.endsWith('.json')) : [];
    const found = names.find((n) => JSON.parse(fs.readFileSync(path.join(folder, n), 'utf8')).file === path.resolve(file));
    return path.join(folder, found ?? 'none.json');
  };
  const readState = (file: string) => {
    try {
      return JSON.parse(fs.readFileSync(stateFileOf(file), 'utf8'));
    } catch {
      return undefined;
    }
  };
  const randomFile = (name: string, size: number, where = dir) => {
    const file = path.join(where, name);
    // Published files are inspected (issue 40): models are real files of their format, around random data.
    const bytes = name.endsWith('.safetensors') ? safetensorsOfSize(size) : name.endsWith('.onnx') ? onnxModel({ hidden: Math.ceil(size / 28) }) : randomBytes(size);
    fs.writeFileSync(file, bytes);
    return { file, bytes };
  };

  /**
   * Starts `svc ...argv` in a child holding back every part from `holdFrom` on (local store)
   * and SIGKILLs it once the state file of `file` shows a part done but not all; resolves to that state.
   */
  const interrupted = async (file: string, argv: string[], holdFrom = 2) => {
    verdict = (part) => (part !== undefined && part >= holdFrom ? 'hold' : 'pass');
    const child = spawnSvc(...argv);
    const exited = finished(child);
    const deadline = Date.now() + 30_000;
    let state;
    for (;;) {
      state = readState(file);
      const done = state ? Object.keys(state.etags).length : 0;
      if (done >= 1 && done < state.part_count) break;
      if (child.exitCode !== null) throw new Error(`svc exited (${child.exitCode}) before it could be interrupted: ${(await exited).stderr}`);
      if (Date.now() > deadline) throw new Error('no part of the upload landed in 30 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGKILL');
    await exited;
    verdict = () => 'pass';
    held.splice(0).forEach((res) => res.destroy());
    return readState(file);
  };

  const readStoragePath = (stdout: string) => /^storage_path: (\S+)$/m.exec(stdout)![1];

  /** Publishes what `svc upload` stored and downloads it: the bytes buyers get. */
  const publishedBytes = async (uploaded: { storage_path: string; file_name: string; file_size: number; file_extension: string }, title: string) => {
    const model = await t.request('POST', '/v1/models', { key: env.SVC_API_KEY, body: modelBody(uploaded, { title }) });
    expect(model.status).toBe(201);
    const download = await t.request('POST', `/v1/models/${model.body.id}/download`, { key: env.SVC_API_KEY });
    expect(download.status).toBe(200);
    const served = await t.storage('GET', download.body.url);
    expect(served.status).toBe(200);
    return { served: served.bytes, fileSha256: download.body.file_sha256 };
  };

  it('uploads a 12 MiB file in 3 parts, and publishes exactly its bytes', async () => {
    const { file, bytes } = randomFile('arm-policy.safetensors', 12 * MiB + 5);
    const uploaded = await svc('upload', file, '--json');
    expect(uploaded).toMatchObject({ code: 0, stderr: '' });
    const result = JSON.parse(uploaded.stdout);
    expect(result).toEqual({ storage_path: expect.any(String), file_name: 'arm-policy.safetensors', file_size: bytes.length, file_extension: '.safetensors' });
    if (!onExternalS3) expect(seen.filter((s) => s.startsWith('PUT /storage/')).sort()).toEqual(['1', '2', '3'].map((n) => expect.stringMatching(new RegExp(` part ${n}$`))));
    expect(fs.existsSync(stateFileOf(file))).toBe(false);

    const { served, fileSha256 } = await publishedBytes(result, 'Arm Policy Parts');
    expect(served.length).toBe(bytes.length);
    expect(sha256(served)).toBe(sha256(bytes));
    expect(fileSha256).toBe(sha256(bytes));
  });

  it('publishes with --file in parts too', async () => {
    const { file, bytes } = randomFile('nav.onnx', 6 * MiB);
    const body = path.join(dir, 'nav.json');
    fs.writeFileSync(body, JSON.stringify({ title: 'Nav In Parts', type: 'onnx-model', license: 'MIT' }));
    const res = await svc('models', 'publish', body, '--file', file, '--parallel', '2', '--json');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ slug: 'nav-in-parts', file: { name: 'nav.onnx', size: bytes.length } });
    expect(await svc('upload', file, '--parallel', '33')).toMatchObject({ code: 2, stderr: expect.stringContaining('--parallel must be a whole number from 1 to 32') });
  });

  it('resumes a killed upload with the parts still missing, and the stored file is the same bytes', async () => {
    const { file, bytes } = randomFile('long-horizon.safetensors', 30 * MiB);
    const state = await interrupted(file, ['upload', file, '--parallel', '1']);
    expect(state).toMatchObject({ file: path.resolve(file), size: bytes.length, part_count: 6, upload_id: expect.stringMatching(/^mpu_/) });
    expect(JSON.stringify(state)).not.toContain(env.SVC_API_KEY);
    const done = Object.keys(state.etags).length;
    expect(done).toBeGreaterThanOrEqual(1);
    seen.length = 0;

    const resumed = await finished(spawnSvc('upload', file, '--parallel', '1'));
    expect(resumed.stderr).toContain(`resuming: ${done} of 6 parts already uploaded`);
    expect(resumed.code).toBe(0);
    if (!onExternalS3) expect(seen.filter((s) => s.startsWith('PUT /storage/')).length).toBe(6 - done);
    expect(fs.existsSync(stateFileOf(file))).toBe(false);
    const storagePath = readStoragePath(resumed.stdout);
    expect(storagePath).toBe(state.storage_path);

    const { served } = await publishedBytes({ storage_path: storagePath, file_name: 'long-horizon.safetensors', file_size: bytes.length, file_extension: '.safetensors' }, 'Long Horizon');
    expect(sha256(served)).toBe(sha256(bytes));
  });

  it('starts over when the upload it would resume was aborted', async () => {
    const { file, bytes } = randomFile('aborted.safetensors', 30 * MiB);
    const state = await interrupted(file, ['upload', file, '--parallel', '1']);
    const aborted = await t.request('POST', '/v1/uploads/abort', { key: env.SVC_API_KEY, body: { storage_path: state.storage_path, upload_id: state.upload_id } });
    expect(aborted.status).toBe(200);

    const again = await finished(spawnSvc('upload', file, '--parallel', '4'));
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('aborted or swept by the service: starting over');
    const storagePath = readStoragePath(again.stdout);
    expect(fs.existsSync(stateFileOf(file))).toBe(false);
    const { served } = await publishedBytes({ storage_path: storagePath, file_name: 'aborted.safetensors', file_size: bytes.length, file_extension: '.safetensors' }, 'Started Over');
    expect(sha256(served)).toBe(sha256(bytes));
  });

  it('finishes a run killed after the service completed the upload but before the state file went', async () => {
    const { file, bytes } = randomFile('completed.safetensors', 11 * MiB);
    verdict = (_part, req) => (req.url === '/v1/uploads/complete' ? 'swallow' : 'pass');
    const child = spawnSvc('upload', file);
    const exited = finished(child);
    const deadline = Date.now() + 30_000;
    while (!seen.includes('swallowed 200')) {
      if (Date.now() > deadline) throw new Error('the upload was not completed in 30 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGKILL');
    await exited;
    verdict = () => 'pass';
    const state = readState(file);
    expect(Object.keys(state.etags)).toHaveLength(3);
    seen.length = 0;

    // The completion is 404 now; the file at storage_path, whole, shows it was done.
    const again = await finished(spawnSvc('upload', file));
    expect(again.stderr).toContain('resuming: 3 of 3 parts already uploaded');
    expect(again.stderr).not.toContain('starting over');
    expect(again.code).toBe(0);
    expect(readStoragePath(again.stdout)).toBe(state.storage_path);
    expect(seen).not.toContain('POST /v1/uploads');
    expect(fs.existsSync(stateFileOf(file))).toBe(false);
    const { served } = await publishedBytes({ storage_path: state.storage_path, file_name: 'completed.safetensors', file_size: bytes.length, file_extension: '.safetensors' }, 'Completed Before');
    expect(sha256(served)).toBe(sha256(bytes));
  });

  it('sends a part again when the completion says the store does not hold it as recorded', async () => {
    const { file, bytes } = randomFile('mismatch.safetensors', 30 * MiB);
    const state = await interrupted(file, ['upload', file, '--parallel', '1']);
    // As if the part had been overwritten since (another run's PUT of it): its recorded ETag no longer matches.
    fs.writeFileSync(stateFileOf(file), JSON.stringify({ ...state, etags: { ...state.etags, 1: '"00000000000000000000000000000000"' } }));
    seen.length = 0;
    const again = await svc('upload', file, '--json');
    expect(again.code).toBe(0);
    if (!onExternalS3) expect(seen.filter((s) => / part 1$/.test(s))).toHaveLength(1);
    const { served } = await publishedBytes(JSON.parse(again.stdout), 'Mismatch Fixed');
    expect(sha256(served)).toBe(sha256(bytes));
  });

  (onExternalS3 ? it.skip : it)('retries a part answered 503 and signs a part refused as expired (403) again', async () => {
    const attempts = new Map<number, number>();
    verdict = (part) => {
      if (part === undefined) return 'pass';
      attempts.set(part, (attempts.get(part) ?? 0) + 1);
      if (attempts.get(part) === 1 && part === 2) return 503;
      if (attempts.get(part) === 1 && part === 3) return 403;
      return 'pass';
    };
    const { file, bytes } = randomFile('flaky.safetensors', 11 * MiB);
    const res = await svc('upload', file, '--json');
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(Object.fromEntries(attempts)).toEqual({ 1: 1, 2: 2, 3: 2 });
    expect(seen).toContain('POST /v1/uploads/parts');
    const { served } = await publishedBytes(JSON.parse(res.stdout), 'Flaky Network');
    expect(sha256(served)).toBe(sha256(bytes));
  });

  (onExternalS3 ? it.skip : it)('gives up on a part after 3 retries, saying how to resume, and the next run resumes', async () => {
    let failures = 0;
    verdict = (part) => (part === 2 ? (failures++, 500) : 'pass');
    const { file, bytes } = randomFile('broken.safetensors', 11 * MiB);
    const failed = await svc('upload', file, '--parallel', '1');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/part 2 of 3 failed after 4 attempts: .*HTTP 500.*; 1 of 3 parts are uploaded and kept: run the same command again to resume/);
    expect(failures).toBe(4);
    // No part is started after one failed for good; those done are kept.
    expect(Object.keys(readState(file).etags)).toEqual(['1']);

    verdict = () => 'pass';
    seen.length = 0;
    const again = await svc('upload', file, '--json');
    expect(again.code).toBe(0);
    // Only the parts not kept are sent again; they go up in parallel, so in either order.
    expect(seen.filter((s) => s.startsWith('PUT /storage/')).map((s) => s.replace(/^.* part /, 'part ')).sort()).toEqual(['part 2', 'part 3']);
    expect(fs.existsSync(stateFileOf(file))).toBe(false);
    const { served } = await publishedBytes(JSON.parse(again.stdout), 'Broken Then Fixed');
    expect(sha256(served)).toBe(sha256(bytes));
  }, 30_000);

  it('uploads a large dataset shard in parts, completed, and resumes it after a kill while small shards stay single PUTs', async () => {
    const draft = await t.request('POST', '/v1/datasets', { key: env.SVC_API_KEY, body: { title: 'Warehouse Episodes', type: 'dataset', price_cents: 0 } });
    expect(draft.status).toBe(201);
    const shards = fs.mkdtempSync(path.join(dir, 'episodes-'));
    const big = randomFile('ep-big.mcap', 16 * MiB, shards);
    const small = randomFile('ep-small.mcap', 1000, shards);

    const state = await interrupted(big.file, ['datasets', 'upload', shards, '--dataset', draft.body.id, '--parallel', '1']);
    expect(state.target).toBe(`shard ${draft.body.id}/ep-big.mcap`);
    const done = Object.keys(state.etags).length;
    expect(done).toBeGreaterThanOrEqual(1);
    const resumed = await finished(spawnSvc('datasets', 'upload', shards, '--dataset', draft.body.id));
    expect(resumed.stderr).toContain(`ep-big.mcap: resuming: ${done} of 4 parts already uploaded`);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe(`${draft.body.id}: uploaded 2 shard(s), 0 already there; 2 shards, ${big.bytes.length + small.bytes.length} bytes in all\n`);
    expect(fs.existsSync(stateFileOf(big.file))).toBe(false);

    for (const { file, bytes } of [big, small]) {
      const fetched = await t.request('GET', `/v1/datasets/${draft.body.id}/shards/${path.basename(file)}`, { key: env.SVC_API_KEY });
      expect(fetched.status).toBe(200);
      expect(sha256((await t.storage('GET', fetched.body.url)).bytes)).toBe(sha256(bytes));
    }
    // Run again: both shards landed whole, so nothing is sent.
    const again = await svc('datasets', 'upload', shards, '--dataset', draft.body.id, '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ uploaded: [], skipped: 2 });
  });
});
