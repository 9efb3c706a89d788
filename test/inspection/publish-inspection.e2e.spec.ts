import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3Server, S3TestServer } from '../storage/s3-server';
import { startTestApp, TestApp } from '../support/app';
import { writeLeRobotDataset } from '../support/lerobot-fixture';
import { hdf5File, maliciousPickle, mcapFile, mcapRecording, onnxModel, onnxModelParameters, parquetFile, rosbagFile, safetensorsFile, urdfRobot } from '../support/asset-files';
import { eventsOf, modelBody, upload } from '../catalog/catalog-client';

/**
 * Issue 40: every published file is opened with its format's reader before the publish
 * answers; what is inside is on the object before purchase, and a file that is not what its
 * extension says is refused naming it. On both stores (S3: ranged GETs on the gateway).
 */
describe.each(['local', 's3'] as const)('publishing inspects every file (%s store)', (adapter) => {
  let t: TestApp;
  let s3: S3TestServer | undefined;
  let seller: { accountId: string; key: string };
  let reader: { accountId: string; key: string };

  beforeAll(async () => {
    s3 = adapter === 's3' ? await startS3Server() : undefined;
    t = await startTestApp({ env: s3?.env ?? {}, localStore: adapter === 'local' });
    seller = await t.accountWithKey({ name: 'Inspected Robotics' });
    reader = await t.accountWithKey({ scopes: ['models:read', 'datasets:read'] });
  });
  afterAll(async () => {
    await t.close();
    await s3?.close();
  });

  const published = async (title: string) => (await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => e.data.listing.title === title);

  it('shows a paid ONNX policy\'s inputs, outputs and parameters to a reader who has not bought it', async () => {
    const grant = await upload(t, seller.key, 'policy.onnx', onnxModel());
    const res = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Inspected Policy', price_cents: 2500 }) });
    expect(res.status).toBe(201);
    const seen = await t.request('GET', `/v1/models/${res.body.slug}`, { key: reader.key });
    expect(seen.body.inspection).toMatchObject({
      format: 'onnx', ir_version: 8, opset: 13, producer: 'test-fixture 1',
      inputs: [{ name: 'obs', elem_type: 'float', shape: ['batch', 4] }], outputs: [{ name: 'action', elem_type: 'float', shape: ['batch', 2] }],
      parameters: onnxModelParameters(), onnxruntime: 'loads',
    });
    expect((await t.request('POST', `/v1/models/${res.body.slug}/download`, { key: reader.key })).status).toBe(402);
  });

  it('refuses 13 bytes of text named .onnx with 400 validation_failed naming the file, and records nothing', async () => {
    const grant = await upload(t, seller.key, 'policy.onnx', 'onnx weights');
    const drafted = (await eventsOf(t, 'ListingDrafted', seller.accountId)).length;
    const res = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Text Policy', type: 'rl-policy' }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'validation_failed',
      message: expect.stringMatching(/^"policy\.onnx" is not an ONNX model: /),
      validation_errors: [{ code: 'invalid_format', message: expect.stringMatching(/^"policy\.onnx" is not an ONNX model: /) }],
    });
    expect((await eventsOf(t, 'ListingDrafted', seller.accountId)).length).toBe(drafted);
    expect(await published('Text Policy')).toEqual([]);
  });

  it('refuses a pickle that would run os.system, without running it, and the draft shows why until a publish passes', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'publish-pickle-')), 'ran');
    const grant = await upload(t, seller.key, 'weights.pt', maliciousPickle(`touch ${marker}`, 4));
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant, { title: 'Trojan Weights' }) });
    expect(draft.status).toBe(201);
    const refused = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key });
    expect(refused.status).toBe(400);
    const problem = { code: 'unsafe_pickle', message: expect.stringMatching(/^"weights\.pt" was refused: its pickle imports posix\.system, which is outside the tensor-rebuilding allowlist/) };
    expect(refused.body.error).toMatchObject({ code: 'validation_failed', validation_errors: [problem] });
    expect((await t.request('GET', `/v1/listings/${draft.body.id}`, { key: seller.key })).body).toMatchObject({ status: 'draft', validation_status: 'failed', validation_errors: [problem] });
    expect(existsSync(marker)).toBe(false);
    expect(await published('Trojan Weights')).toEqual([]);
    expect((await t.request('GET', `/v1/models/${draft.body.id}`, { key: reader.key })).status).toBe(404);
  });

  it('publishes a safetensors model and a URDF with what is inside them', async () => {
    const weights = await upload(t, seller.key, 'model.safetensors', safetensorsFile());
    const model = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(weights, { title: 'Tensors' }) });
    expect(model.body.inspection).toEqual({ format: 'safetensors', tensors: 2, dtypes: { F32: 2 }, parameters: 8, metadata: { format: 'pt' } });
    const robot = await upload(t, seller.key, 'arm.urdf', urdfRobot());
    const arm = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(robot, { title: 'Two Link Arm', type: 'robot-description' }) });
    expect(arm.body.inspection).toMatchObject({ format: 'urdf', robot: 'two_link_arm', joints_by_type: { revolute: 1, prismatic: 1 }, degrees_of_freedom: 2 });
  });

  it("refuses a dataset whose .hdf5 shard is random bytes, naming the shard; a dataset of real files shows each shard's inspection", async () => {
    const putShard = async (datasetId: string, name: string, bytes: Buffer) => {
      const minted = await t.request('POST', `/v1/datasets/${datasetId}/shards`, { key: seller.key, body: { name, size: bytes.length } });
      expect((await t.storage('PUT', minted.body.upload_url, { payload: bytes })).status).toBe(200);
    };
    const bad = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Random Arrays', type: 'dataset' } });
    await putShard(bad.body.id, 'episodes.hdf5', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) % 256)));
    await putShard(bad.body.id, 'run.mcap', mcapFile());
    const truncated = await parquetFile();
    await putShard(bad.body.id, 'data/episode.parquet', truncated.subarray(0, truncated.length - 20));
    const refused = await t.request('POST', `/v1/datasets/${bad.body.id}/publish`, { key: seller.key });
    expect(refused.status).toBe(400);
    expect(refused.body.error.validation_errors).toEqual([
      { code: 'invalid_format', message: expect.stringMatching(/^"data\/episode\.parquet" is not a Parquet file: .*truncated/) },
      { code: 'invalid_format', message: expect.stringMatching(/^"episodes\.hdf5" is not an HDF5 file: it has no HDF5 superblock signature/) },
    ]);
    expect((await t.request('GET', `/v1/listings/${bad.body.id}`, { key: seller.key })).body.validation_status).toBe('failed');

    const good = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Real Runs', type: 'telemetry', price_cents: 900 } });
    const recording = await mcapRecording();
    await putShard(good.body.id, 'run.mcap', recording);
    await putShard(good.body.id, 'meta.json', Buffer.from('{"episodes":2}'));
    const [table, demos, bag] = [await parquetFile(50, 20), await hdf5File(10), rosbagFile()];
    await putShard(good.body.id, 'data/episode_000000.parquet', table);
    await putShard(good.body.id, 'demos.hdf5', demos);
    await putShard(good.body.id, 'run.bag', bag);
    expect((await t.request('POST', `/v1/datasets/${good.body.id}/publish`, { key: seller.key })).status).toBe(200);
    expect((await t.request('GET', `/v1/datasets/${good.body.id}`, { key: reader.key })).body.inspection).toEqual({
      format: 'dataset',
      shards: 5,
      // An HDF5 file with data/demo_* groups: the robomimic layout, its demos' shapes.
      layout: { kind: 'robomimic', file: 'demos.hdf5', demos: 2, actions: { shape: [10, 7], dtype: '<f4' }, observations: { joint_pos: { shape: [10, 7], dtype: '<f8' } } },
      files: [
        expect.objectContaining({ name: 'data/episode_000000.parquet', size: table.length, format: 'parquet', rows: 50, row_groups: 3, columns: expect.arrayContaining([{ name: 'frame_index', type: 'INT64', logical_type: null, repetition: 'OPTIONAL' }]) }),
        expect.objectContaining({ name: 'demos.hdf5', size: demos.length, format: 'hdf5', objects: 11, tree: expect.arrayContaining([{ path: '/data/demo_0/actions', type: 'dataset', shape: [10, 7], dtype: '<f4', chunks: null }]) }),
        { name: 'meta.json', size: 14, format: 'json', top_level: 'object', keys: ['episodes'] },
        expect.objectContaining({ name: 'run.bag', size: bag.length, format: 'rosbag', indexed: true, messages: 5, duration_s: 4, topics: expect.arrayContaining([expect.objectContaining({ topic: '/chatter', type: 'std_msgs/String', messages: 3 })]) }),
        expect.objectContaining({ name: 'run.mcap', size: recording.length, format: 'mcap', indexed: true, duration_s: 2, topics: expect.arrayContaining([expect.objectContaining({ topic: '/joint_states', schema: 'sensor_msgs/msg/JointState', messages: 3 })]) }),
      ],
    });
  });

  it('refuses a LeRobot dataset whose meta/info.json claims an episode that is not there, naming it; with it, shows the layout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lerobot-'));
    try {
      const names = writeLeRobotDataset(dir, 3, 4).filter((n) => !n.endsWith('.mp4'));
      const dataset = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Three Episodes', type: 'dataset' } });
      const put = async (name: string) => {
        const bytes = readFileSync(join(dir, name));
        const minted = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: seller.key, body: { name, size: bytes.length } });
        expect((await t.storage('PUT', minted.body.upload_url, { payload: bytes })).status).toBe(200);
      };
      for (const name of names.filter((n) => !n.endsWith('episode_000002.parquet'))) await put(name);
      const refused = await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key: seller.key });
      expect([refused.status, refused.body.error.validation_errors]).toEqual([400, [{ code: 'layout_incomplete', message: '"meta/info.json" claims 3 episodes but these files are missing: data/chunk-000/episode_000002.parquet' }]]);
      expect((await t.request('GET', `/v1/listings/${dataset.body.id}`, { key: seller.key })).body.validation_status).toBe('failed');

      await put('data/chunk-000/episode_000002.parquet');
      expect((await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key: seller.key })).status).toBe(200);
      expect((await t.request('GET', `/v1/datasets/${dataset.body.id}`, { key: reader.key })).body.inspection.layout).toEqual({
        kind: 'lerobot', robot_type: 'so100', fps: 30, episodes: 3, episode_files: 3, frames: 12,
        features: expect.objectContaining({ action: { dtype: 'float32', shape: [2] }, 'observation.images.front': { dtype: 'video', shape: [48, 64, 3] } }),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('passes a format it cannot check (a TensorRT engine) as opaque', async () => {
    const grant = await upload(t, seller.key, 'policy.engine', 'serialized tensorrt plan');
    const res = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Engine' }) });
    expect([res.status, res.body.inspection]).toEqual([201, { format: 'opaque' }]);
  });
});
