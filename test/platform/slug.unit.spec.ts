import { claimFreeSlug } from '../../src/platform/slug';

/** Issue 24: a slug is found in a bounded number of claims, however many of the name are taken. */
describe('claimFreeSlug', () => {
  it('takes the base, then "-2", then a random suffix', async () => {
    const taken = new Set(['grasp-net', 'grasp-net-2']);
    const tried: string[] = [];
    const slug = await claimFreeSlug('grasp-net', async (s) => (tried.push(s), !taken.has(s)));
    expect(tried.slice(0, 2)).toEqual(['grasp-net', 'grasp-net-2']);
    expect(slug).toMatch(/^grasp-net-[a-z0-9]{6}$/);
    expect(tried).toHaveLength(3);
  });

  it('gives up after five claims when every one is taken, whatever the number taken', async () => {
    let claims = 0;
    expect(await claimFreeSlug('crowded', async () => (claims++, false))).toBeUndefined();
    expect(claims).toBe(5);
  });
});
