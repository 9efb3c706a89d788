import { createHash } from 'node:crypto';
import { TestApp } from '../support/app';
import { onnxModel } from '../support/asset-files';
import { recordedOfType } from '../support/events';

/** Lowercase hex SHA-256, as the API reports published files. */
export const sha256 = (content: string | Uint8Array) => createHash('sha256').update(content).digest('hex');

/**
 * The bytes a test publishes as a model: a real ONNX model (published files are inspected,
 * issue 40). A string names the model's producer, so tests that need distinct files get
 * distinct real models.
 */
export const modelBytes = (content: string | Uint8Array = 'test-fixture'): Buffer => (typeof content === 'string' ? onnxModel({ producer: content }) : Buffer.from(content));

/** Path and query of a signed URL of the local store, for Fastify inject. */
export const localPath = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/** Mints a grant and PUTs the bytes to its signed URL; returns the grant. */
export async function upload(t: TestApp, key: string, fileName: string, content: string | Uint8Array) {
  const grant = await t.request('POST', '/v1/uploads', { key, body: { file_name: fileName, file_size: typeof content === 'string' ? Buffer.byteLength(content) : content.length } });
  if (grant.status !== 200) throw new Error(`grant failed: ${grant.text}`);
  const put = await t.storage('PUT', grant.body.upload_url, { payload: typeof content === 'string' ? content : Buffer.from(content) });
  if (put.status !== 200) throw new Error(`upload failed: ${put.text}`);
  return grant.body as { storage_path: string; file_name: string; file_size: number; file_extension: string };
}

export function modelBody(grant: { storage_path: string; file_name: string; file_size: number; file_extension: string }, overrides: Record<string, unknown> = {}) {
  return {
    title: 'Grasp Policy',
    description: 'A grasping policy for parallel grippers',
    type: 'rl-policy',
    category: 'manipulation',
    license: 'MIT',
    storage_path: grant.storage_path,
    file_name: grant.file_name,
    file_size: grant.file_size,
    file_extension: grant.file_extension,
    ...overrides,
  };
}

/** Uploads a small real ONNX model (modelBytes(content)) and publishes it through POST /v1/models. */
export async function publishModel(t: TestApp, key: string, overrides: Record<string, unknown> = {}, content: string | Uint8Array = 'onnx-bytes') {
  const grant = await upload(t, key, 'policy.onnx', modelBytes(content));
  const res = await t.request('POST', '/v1/models', { key, body: modelBody(grant, overrides) });
  if (res.status !== 201) throw new Error(`publish failed: ${res.text}`);
  return res.body;
}

/** Recorded events of one type, optionally only those about an account's listings. */
export async function eventsOf(t: TestApp, type: string, accountId?: string): Promise<{ stream_id: string; data: any }[]> {
  // data->>'account_id' as the SQL compared it: as text.
  return (await recordedOfType(t, type)).filter((e) => accountId === undefined || String(e.data?.account_id) === accountId);
}
