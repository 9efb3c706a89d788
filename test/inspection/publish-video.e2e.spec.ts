import { startS3Server, S3TestServer } from '../storage/s3-server';
import { startTestApp, TestApp } from '../support/app';
import { matroskaVideo, mp4Video } from '../support/video-files';

/**
 * Issue 41: a dataset's video shards (written by mp4-muxer and webm-muxer) are opened with a
 * demuxer when it is published, by ranged reads on either store (S3: ranged GETs on the
 * gateway); what is inside is on the dataset before purchase, and a mislabelled or truncated
 * video is refused naming its shard.
 */
describe.each(['local', 's3'] as const)('publishing inspects video shards (%s store)', (adapter) => {
  let t: TestApp;
  let s3: S3TestServer | undefined;
  let seller: { accountId: string; key: string };
  let reader: { accountId: string; key: string };

  beforeAll(async () => {
    s3 = adapter === 's3' ? await startS3Server() : undefined;
    t = await startTestApp({ env: s3?.env ?? {}, localStore: adapter === 'local' });
    seller = await t.accountWithKey({ name: 'Camera Robotics' });
    reader = await t.accountWithKey({ scopes: ['datasets:read'] });
  });
  afterAll(async () => {
    await t.close();
    await s3?.close();
  });

  const putShard = async (datasetId: string, name: string, bytes: Uint8Array) => {
    const minted = await t.request('POST', `/v1/datasets/${datasetId}/shards`, { key: seller.key, body: { name, size: bytes.length } });
    expect(minted.status).toBe(200);
    expect((await t.storage('PUT', minted.body.upload_url, { payload: Buffer.from(bytes) })).status).toBe(200);
  };

  it('shows codec, resolution, frames and duration of each video shard to a reader before purchase', async () => {
    const dataset = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Wrist Cameras', type: 'dataset', price_cents: 500 } });
    const front = mp4Video({ width: 640, height: 480, frames: 90, frameBytes: 2048 });
    const wrist = matroskaVideo({ width: 320, height: 240, frames: 60 });
    const side = matroskaVideo({ type: 'matroska', frames: 30 });
    await putShard(dataset.body.id, 'videos/front/episode_000000.mp4', front);
    await putShard(dataset.body.id, 'videos/wrist/episode_000000.webm', wrist);
    await putShard(dataset.body.id, 'videos/side/episode_000000.mkv', side);
    expect((await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key: seller.key })).status).toBe(200);
    const read = await t.request('GET', `/v1/datasets/${dataset.body.id}`, { key: reader.key });
    expect(read.body.inspection.files).toEqual([
      expect.objectContaining({ name: 'videos/front/episode_000000.mp4', size: front.length, format: 'mp4', codec: 'avc1.42c01e', width: 640, height: 480, frames: 90, duration_s: 3 }),
      expect.objectContaining({ name: 'videos/side/episode_000000.mkv', size: side.length, format: 'matroska', codec: 'V_MPEG4/ISO/AVC', width: 320, height: 240, frames: 30 }),
      expect.objectContaining({ name: 'videos/wrist/episode_000000.webm', size: wrist.length, format: 'webm', codec: 'V_VP9', width: 320, height: 240, frames: 60 }),
    ]);
  });

  it('refuses a WebM named .mp4 and a truncated .webm, naming each shard', async () => {
    const dataset = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Broken Cameras', type: 'dataset' } });
    const whole = matroskaVideo({ frames: 30, frameBytes: 512 });
    await putShard(dataset.body.id, 'front.mp4', matroskaVideo());
    await putShard(dataset.body.id, 'wrist.webm', whole.subarray(0, whole.length - 700));
    const refused = await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key: seller.key });
    expect(refused.status).toBe(400);
    expect(refused.body.error.validation_errors).toEqual([
      { code: 'invalid_format', message: expect.stringMatching(/^"front\.mp4" is not an MP4 video: it does not start with an MP4 box/) },
      { code: 'invalid_format', message: expect.stringMatching(/^"wrist\.webm" is not a WebM video: .*truncated/) },
    ]);
    expect((await t.request('GET', `/v1/listings/${dataset.body.id}`, { key: seller.key })).body.validation_status).toBe('failed');
  });
});
