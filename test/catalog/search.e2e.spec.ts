import { startTestApp, TestApp } from '../support/app';
import { publishModel } from './catalog-client';
import { CatalogQueries } from '../../src/catalog/catalog-queries';

describe('GET /v1/models: full-text search, filters, facets, pages', () => {
  let t: TestApp;
  let key: string;
  const ids: Record<string, string> = {};

  const list = async (query: string) => {
    const res = await t.request('GET', `/v1/models${query}`, { key });
    return res;
  };
  const slugs = async (query: string) => (await list(query)).body.items.map((m: any) => m.slug);

  beforeAll(async () => {
    t = await startTestApp();
    ({ key } = await t.accountWithKey());
    const models: Record<string, unknown>[] = [
      { title: 'Grasp Planner', description: 'Plans grasps for arms', category: 'manipulation', type: 'onnx-model', tags: ['grasping'], frameworks: ['pytorch'], hardware: ['ur5'], ros_compatible: true },
      { title: 'Lidar SLAM', description: 'Maps warehouses with a grasp of geometry', category: 'slam', type: 'ros-package', tags: ['mapping'], sensors: ['lidar'], jetson_compatible: true },
      { title: 'Door Opener', description: 'Opens doors', category: 'manipulation', type: 'rl-policy', tags: ['grasp', 'doors'], frameworks: ['jax'], isaac_sim_compatible: true },
      { title: 'Camera Calib', description: 'Calibrates cameras', category: 'vision', type: 'onnx-model', sensors: ['rgb'] },
    ];
    for (const body of models) {
      const m = await publishModel(t, key, body);
      ids[m.slug] = m.id;
    }
  });
  afterAll(() => t.close());

  it('ranks full-text matches over title, tags and description', async () => {
    // "grasp" stems to the same lexeme as "grasps"/"grasping": a title hit outranks a tag, a tag a description.
    expect(await slugs('?q=grasp')).toEqual(['grasp-planner', 'door-opener', 'lidar-slam']);
    expect(await slugs('?q=cameras')).toEqual(['camera-calib']);
    expect(await slugs('?q=submarine')).toEqual([]);
  });

  it('filters by type, category and the robotics facets, additively', async () => {
    expect(await slugs('?category=manipulation')).toEqual(['door-opener', 'grasp-planner']);
    expect(await slugs('?category=manipulation&type=onnx-model')).toEqual(['grasp-planner']);
    expect(await slugs('?framework=jax')).toEqual(['door-opener']);
    expect(await slugs('?hardware=ur5')).toEqual(['grasp-planner']);
    expect(await slugs('?sensor=lidar')).toEqual(['lidar-slam']);
    expect(await slugs('?ros_compatible=true')).toEqual(['grasp-planner']);
    expect(await slugs('?jetson_compatible=true')).toEqual(['lidar-slam']);
    expect(await slugs('?isaac_sim_compatible=true&q=doors')).toEqual(['door-opener']);
    expect(await slugs('?q=grasp&category=slam')).toEqual(['lidar-slam']);
  });

  it('walks pages with the cursor, newest first and by rank under q', async () => {
    const first = await list('?limit=3');
    expect(first.body.items.map((m: any) => m.slug)).toEqual(['camera-calib', 'door-opener', 'lidar-slam']);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: ids['lidar-slam'] });
    const second = await list(`?limit=3&cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({ items: [expect.objectContaining({ slug: 'grasp-planner' })], has_more: false, next_cursor: null });
    const ranked = await list('?q=grasp&limit=1');
    const rest = await list(`?q=grasp&limit=5&cursor=${ranked.body.next_cursor}`);
    expect([...ranked.body.items, ...rest.body.items].map((m: any) => m.slug)).toEqual(['grasp-planner', 'door-opener', 'lidar-slam']);
  });

  it('clamps limit=0 to 1 and limit=1000 to 100 instead of rejecting', async () => {
    const zero = await list('?limit=0');
    expect(zero.status).toBe(200);
    expect(zero.body.items).toHaveLength(1);
    const huge = await list('?limit=1000');
    expect(huge.status).toBe(200);
    expect(huge.body.items).toHaveLength(4);
  });

  it('answers 400 validation_failed for a garbage or unknown cursor and a non-boolean facet', async () => {
    for (const query of ['?cursor=%27%3B%20DROP%20TABLE%20catalog_listings%3B--', '?cursor=lst_doesnotexist', '?limit=ten', '?ros_compatible=yes']) {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('treats SQL and regex metacharacters in q as plain text', async () => {
    for (const q of ["grasp'; DROP TABLE catalog_listings; --", '.*(grasp|[a-z]+)$', '"grasp" OR 1=1', '!!&&||():*\\', '%_']) {
      const res = await list(`?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body.items)).toBe(true);
    }
    expect(await slugs("?q=grasp'%3B--")).toEqual(['grasp-planner', 'door-opener', 'lidar-slam']);
    expect((await list('')).body.items).toHaveLength(4);
  });
});

describe('GET /v1/models?q=: a common word past the ranked window', () => {
  let t: TestApp;
  let key: string;
  let queries: CatalogQueries;
  // Published oldest first. The window (the 3 newest matches) is ranked: title, then tags, then
  // description; the older matches follow newest first.
  const models = [
    { title: 'Arm One', description: 'robot arm', category: 'manipulation' },
    { title: 'Arm Two', description: 'robot arm', category: 'slam' },
    { title: 'Arm Three', description: 'robot arm', category: 'manipulation' },
    { title: 'Arm Four', description: 'robot arm', category: 'slam' },
    { title: 'Robot Five', description: 'an arm', category: 'manipulation' },
    { title: 'Arm Six', description: 'an arm', tags: ['robot'], category: 'slam' },
    { title: 'Arm Seven', description: 'robot arm, robot hand, robot wrist', category: 'manipulation' },
    { title: 'Unrelated', description: 'a camera', category: 'manipulation' },
  ];
  const expected = ['robot-five', 'arm-six', 'arm-seven', 'arm-four', 'arm-three', 'arm-two', 'arm-one'];

  const walk = async (query: string, limit: number) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const res = await t.request('GET', `/v1/models?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((m: any) => m.slug));
      cursor = res.body.next_cursor;
      if (!res.body.has_more) return seen;
    }
    throw new Error('the walk did not end');
  };

  beforeAll(async () => {
    t = await startTestApp();
    ({ key } = await t.accountWithKey());
    for (const body of models) await publishModel(t, key, body);
    queries = t.app.get(CatalogQueries, { strict: false });
    queries.candidates = 3;
  });
  afterAll(() => t.close());

  it('returns every match exactly once: the ranked window, then older matches newest first', async () => {
    for (const limit of [1, 2, 3, 4, 7, 100]) expect(await walk('q=robot', limit)).toEqual(expected);
  });

  it('keeps facets inside the window and the tail', async () => {
    // manipulation matches: window of the 3 newest (seven, five, three; seven says robot thrice, three once), then one.
    expect(await walk('q=robot&category=manipulation', 1)).toEqual(['robot-five', 'arm-seven', 'arm-three', 'arm-one']);
  });

  it('ranks every match when they all fit in the window', async () => {
    queries.candidates = 1000;
    try {
      expect((await walk('q=robot', 2)).slice(0, 2)).toEqual(['robot-five', 'arm-six']);
    } finally {
      queries.candidates = 3;
    }
  });
});
