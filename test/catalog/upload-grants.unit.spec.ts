import { encodeUploadId, partSizeOf, planParts } from '../../src/catalog/upload-grants';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

describe('planParts', () => {
  it.each([
    { size: 6 * GiB, preferred: 64 * MiB, partSize: 64 * MiB, partCount: 96, last: 64 * MiB },
    { size: 100 * MiB + 1, preferred: 64 * MiB, partSize: 64 * MiB, partCount: 2, last: 36 * MiB + 1 },
    // S3 takes 10,000 parts at most: 5 TiB needs parts of 525 MiB (whole MiB), not 64.
    { size: 5 * 1024 * GiB, preferred: 64 * MiB, partSize: 525 * MiB, partCount: 9987, last: 230 * MiB },
    { size: 12 * MiB, preferred: 5 * MiB, partSize: 5 * MiB, partCount: 3, last: 2 * MiB },
    { size: 10 * MiB, preferred: 5 * MiB, partSize: 5 * MiB, partCount: 2, last: 5 * MiB },
  ])('splits $size bytes at $preferred into $partCount parts of $partSize', ({ size, preferred, partSize, partCount, last }) => {
    const plan = planParts(size, preferred);
    expect(plan).toEqual({ fileSize: size, partSize, partCount });
    expect(plan.partCount).toBeLessThanOrEqual(10_000);
    expect(partSizeOf(plan, 1)).toBe(Math.min(partSize, size));
    expect(partSizeOf(plan, plan.partCount)).toBe(last);
    let sum = 0;
    for (let n = 1; n <= plan.partCount; n++) sum += partSizeOf(plan, n);
    expect(sum).toBe(size);
  });

  it('names the store upload and the plan in an opaque upload id', () => {
    const id = encodeUploadId('2~abc', planParts(6 * GiB, 64 * MiB), 'test');
    expect(id).toMatch(/^mpu_[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(id.slice(4), 'base64url').toString())).toEqual(['2~abc', 6 * GiB, 64 * MiB, 'test']);
  });
});
