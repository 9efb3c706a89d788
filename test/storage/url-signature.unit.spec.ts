import { createHmac } from 'node:crypto';
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

  it('signs single-PUT and GET URLs as before parts existed, so URLs already handed out stay valid', () => {
    const hmac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
    expect(signature).toBe(hmac('PUT\nuser/acct_a/1-a.onnx\n1000\n10'));
    expect(sign(secret, { method: 'GET', path: 'published/abc', expires: 1000, maxBytes: 0, fileName: 'policy.onnx' })).toBe(
      hmac('GET\npublished/abc\n1000\n0\npolicy.onnx'),
    );
  });

  describe('a multipart part URL', () => {
    const part: SignedFields = { ...fields, uploadId: 'a'.repeat(24), partNumber: 2 };
    const signed = sign(secret, part);

    it('is valid for its own upload, part number and size', () => {
      expect(verify(secret, part, signed, 0)).toBe('valid');
    });

    it.each([
      ['part number', { ...part, partNumber: 3 }],
      ['upload id', { ...part, uploadId: 'b'.repeat(24) }],
      ['size', { ...part, maxBytes: 11 }],
      ['missing part number', { ...part, partNumber: undefined }],
      ['missing upload id (a single PUT)', { ...fields }],
    ])('rejects a changed %s', (_name, changed) => {
      expect(verify(secret, changed, signed, 0)).toBe('invalid');
    });

    it('is not a single-PUT signature with extra fields ignored', () => {
      expect(verify(secret, part, signature, 0)).toBe('invalid');
    });
  });

  it('rejects another secret and malformed signatures, reporting tampering before expiry', () => {
    expect(verify('other', fields, signature, 0)).toBe('invalid');
    expect(verify(secret, fields, 'zz', 0)).toBe('invalid');
    expect(verify(secret, fields, signature.toUpperCase(), 0)).toBe('invalid');
    expect(verify(secret, { ...fields, expires: 1 }, signature, 5000)).toBe('invalid');
  });
});
