import { ApiError } from '../../src/platform/errors';
import { assertShardName } from '../../src/catalog/shards';
import { assertOwnStoragePath, extensionOf, normalizeExtension, sanitizeFileName } from '../../src/catalog/upload-policy';

const codeOf = (fn: () => void) => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return (error as ApiError).code;
  }
};

describe('upload policy', () => {
  it.each([
    ['policy.onnx', 'policy.onnx'],
    ['../../etc/passwd.onnx', 'passwd.onnx'],
    ['C:\\models\\arm.pt', 'arm.pt'],
    ['..hidden.onnx', 'hidden.onnx'],
    ['my model (final)..onnx', 'my-model-final-.onnx'],
    ['Übergreifer.onnx', 'Ubergreifer.onnx'],
  ])('sanitizes %p to %p', (raw, clean) => {
    expect(sanitizeFileName(raw)).toBe(clean);
  });

  it('keeps the extension when it shortens a long name', () => {
    const name = sanitizeFileName(`${'a'.repeat(300)}.safetensors`);
    expect(name).toHaveLength(200);
    expect(name.endsWith('.safetensors')).toBe(true);
  });

  it('refuses a name with nothing usable', () => {
    expect(codeOf(() => sanitizeFileName('../..'))).toBe('validation_failed');
    expect(codeOf(() => sanitizeFileName('///'))).toBe('validation_failed');
  });

  it('reads and normalizes extensions', () => {
    expect(extensionOf('a.tar.GZ')).toBe('.gz');
    expect(extensionOf('README')).toBe('');
    expect(normalizeExtension('ONNX')).toBe('.onnx');
    expect(normalizeExtension('.onnx')).toBe('.onnx');
  });

  it.each([
    ['user/acct_me/1-a.onnx', 'ok'],
    ['user/acct_me/datasets/lst_1/a.csv', 'ok'],
    ['user/acct_other/1-a.onnx', 'invalid_storage_path'],
    ['user/acct_me/../acct_other/1-a.onnx', 'invalid_storage_path'],
    ['user/acct_me/./1-a.onnx', 'invalid_storage_path'],
    ['user/acct_me//1-a.onnx', 'invalid_storage_path'],
    ['user/acct_me/', 'invalid_storage_path'],
    ['user/acct_meX/1-a.onnx', 'invalid_storage_path'],
    ['/user/acct_me/1-a.onnx', 'invalid_storage_path'],
  ])('checks the storage path %p', (storagePath, expected) => {
    expect(codeOf(() => assertOwnStoragePath('acct_me', storagePath))).toBe(expected);
  });

  it.each([
    ['part-0001.mcap', 'ok'],
    ['a', 'ok'],
    // Issue 41: folders, a ".." inside a segment, up to 16 levels and 512 characters.
    ['a/b', 'ok'],
    ['data/chunk-000/episode_000000.parquet', 'ok'],
    ['x..y', 'ok'],
    [Array.from({ length: 16 }, () => 'd').join('/'), 'ok'],
    ['a'.repeat(512), 'ok'],
    ['..', 'validation_failed'],
    ['.', 'validation_failed'],
    ['a/../b', 'validation_failed'],
    ['a/./b', 'validation_failed'],
    ['/a', 'validation_failed'],
    ['a\\b', 'validation_failed'],
    ['a//b', 'validation_failed'],
    ['a/', 'validation_failed'],
    ['a b', 'validation_failed'],
    ['', 'validation_failed'],
    [Array.from({ length: 17 }, () => 'd').join('/'), 'validation_failed'],
    ['a'.repeat(513), 'validation_failed'],
  ])('checks the shard name %p', (name, expected) => {
    expect(codeOf(() => assertShardName(name))).toBe(expected);
  });
});
