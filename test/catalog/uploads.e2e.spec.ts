import { startTestApp, TestApp } from '../support/app';

describe('/v1/uploads', () => {
  let t: TestApp;
  let me: { accountId: string; key: string };
  let other: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp({ env: { UPLOAD_MAX_BYTES: '1000' } });
    me = await t.accountWithKey({ scopes: ['datasets:upload'] });
    other = await t.accountWithKey();
  });
  afterAll(() => t.close());

  const grant = (body: unknown) => t.request('POST', '/v1/uploads', { key: me.key, body });
  const check = (storagePath: string) => t.request('PUT', '/v1/uploads', { key: me.key, body: { storage_path: storagePath } });

  it('publishes max_bytes and the extension allowlist', async () => {
    const res = await t.request('GET', '/v1/uploads', { key: me.key });
    expect(res.status).toBe(200);
    expect(res.body.max_bytes).toBe(1000);
    expect(res.body.extensions).toEqual(expect.arrayContaining(['.onnx', '.safetensors', '.mcap', '.parquet']));
  });

  it('mints a grant under the caller prefix with a sanitized name', async () => {
    const res = await grant({ file_name: '../../etc/My Policy (v2).ONNX', file_size: 10 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      storage_path: expect.stringMatching(new RegExp(`^user/${me.accountId}/\\d+-My-Policy-v2-.ONNX$`)),
      // Test mode's staging keys live under test/ (on the local store, or in the S3 pass's bucket).
      upload_url: t.s3 ? expect.stringContaining(`/${t.s3.bucket}/test/user/${me.accountId}/`) : expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/storage\/test\/user\//),
      token: expect.stringMatching(/^[0-9a-f]{64}$/),
      expires_in: 3600,
      file_name: 'My-Policy-v2-.ONNX',
      file_size: 10,
      file_extension: '.onnx',
    });
    expect((await check(res.body.storage_path)).body).toEqual({ exists: false, size: 0 });
  });

  it.each([
    { name: 'a disallowed extension', body: { file_name: 'run.exe', file_size: 10 }, field: 'file_name' },
    { name: 'no extension', body: { file_name: 'README', file_size: 10 }, field: 'file_name' },
    { name: 'a name with nothing usable', body: { file_name: '../..', file_size: 10 }, field: 'file_name' },
    { name: 'a size over max_bytes', body: { file_name: 'big.onnx', file_size: 1001 }, field: 'file_size' },
    { name: 'a zero size', body: { file_name: 'empty.onnx', file_size: 0 }, field: 'file_size' },
    { name: 'a fractional size', body: { file_name: 'frac.onnx', file_size: 1.5 }, field: 'file_size' },
  ])('refuses $name with validation_failed naming the field', async ({ body, field }) => {
    const res = await grant(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toContain(`"${field}"`);
  });

  it.each([
    { name: "another account's prefix", path: () => `user/${other.accountId}/1-a.onnx` },
    { name: 'a path that climbs out', path: () => `user/${me.accountId}/../${other.accountId}/1-a.onnx` },
    { name: 'the bare prefix', path: () => `user/${me.accountId}/` },
    { name: 'a path outside user/', path: () => 'etc/passwd' },
  ])('answers invalid_storage_path for $name', async ({ path }) => {
    const res = await check(path());
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_storage_path');
  });

  it('requires models:upload or datasets:upload', async () => {
    const reader = await t.accountWithKey({ scopes: ['models:read'] });
    const res = await t.request('GET', '/v1/uploads', { key: reader.key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('scope_required');
  });
});
