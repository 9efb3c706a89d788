import { sign, SignedFields, verify } from '../../src/storage/url-signature';

describe('local signed URL signatures', () => {
  const secret = 'k'.repeat(64);
  const fields: SignedFields = { method: 'PUT', path: 'user/acct_a/1-a.onnx', expires: 1000, maxBytes: 10 };
  const signature = sign(secret, fields);

  it('accepts the signed fields until the expiry second', () => {
    expect(verify(secret, fields, signature, 1000)).toBe('valid');
    expect(verify(secret, fields, signature, 1001)).toBe('expired');
  });

  it.each([
    ['method', { ...fields, method: 'GET' as const }],
    ['path', { ...fields, path: 'user/acct_b/1-a.onnx' }],
    ['expiry', { ...fields, expires: 999999 }],
    ['size cap', { ...fields, maxBytes: 11 }],
  ])('rejects a changed %s', (_name, changed) => {
    expect(verify(secret, changed, signature, 0)).toBe('invalid');
  });

  it('binds a GET URL to the file name it is served as', () => {
    const get: SignedFields = { method: 'GET', path: 'published/abc', expires: 1000, maxBytes: 0, fileName: 'policy.onnx' };
    const signed = sign(secret, get);
    expect(verify(secret, get, signed, 0)).toBe('valid');
    expect(verify(secret, { ...get, fileName: 'other.exe' }, signed, 0)).toBe('invalid');
  });

  it('rejects another secret and malformed signatures, reporting tampering before expiry', () => {
    expect(verify('other', fields, signature, 0)).toBe('invalid');
    expect(verify(secret, fields, 'zz', 0)).toBe('invalid');
    expect(verify(secret, fields, signature.toUpperCase(), 0)).toBe('invalid');
    expect(verify(secret, { ...fields, expires: 1 }, signature, 5000)).toBe('invalid');
  });
});
