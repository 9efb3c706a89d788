import * as path from 'node:path';
import type { Page } from 'puppeteer-core';
import { modelBody, publishModel, upload } from '../catalog/catalog-client';
import { urdfRobot } from '../support/asset-files';
import { startTestApp, TestApp } from '../support/app';
import { axe, ConsoleBrowser, consoleBrowser, SCREENSHOTS, textOf } from './browser';
import { ConsoleClient } from './console-client';

/**
 * Issue 40 item 5: a URDF robot on its listing's page, drawn in 3D by three.js and
 * urdf-loader (served from node_modules under hashed names, no CDN) when its meshes are in
 * the package, else as its joint tree; the files it draws reach the listing's owner only.
 * Also the inspection beside the card: object values (ONNX operators) as tables inside the card.
 */

/** A binary STL (the format's spec: an 80-byte header, a u32 LE triangle count, 50 bytes a triangle) of a box. */
function stlBox(size: [number, number, number], at: [number, number, number] = [0, 0, 0]): Buffer {
  const [hx, hy, hz] = size.map((s) => s / 2);
  const corner = (i: number): number[] => [at[0] + (i & 1 ? hx : -hx), at[1] + (i & 2 ? hy : -hy), at[2] + (i & 4 ? hz : -hz)];
  // Each face as two triangles of corner indices, wound outwards, with its normal.
  const faces: [number[], number[]][] = [
    [[-1, 0, 0], [0, 4, 6, 0, 6, 2]],
    [[1, 0, 0], [1, 3, 7, 1, 7, 5]],
    [[0, -1, 0], [0, 1, 5, 0, 5, 4]],
    [[0, 1, 0], [2, 6, 7, 2, 7, 3]],
    [[0, 0, -1], [0, 2, 3, 0, 3, 1]],
    [[0, 0, 1], [4, 5, 7, 4, 7, 6]],
  ];
  const out = Buffer.alloc(84 + 12 * 50);
  out.write('binary STL of a box, written to the spec by the robot viewer test', 0, 'ascii');
  out.writeUInt32LE(12, 80);
  let at50 = 84;
  for (const [normal, corners] of faces) {
    for (let t = 0; t < 2; t++) {
      const values = [...normal, ...corners.slice(t * 3, t * 3 + 3).flatMap(corner)];
      values.forEach((v, i) => out.writeFloatLE(v, at50 + i * 4));
      out.writeUInt16LE(0, at50 + 48);
      at50 += 50;
    }
  }
  return out;
}

/** An arm in a ROS package's layout: a base, a turning column, a forearm that slides, each a mesh of the package. */
const ARM_URDF = `<?xml version="1.0"?>
<robot name="slide_arm">
  <material name="steel"><color rgba="0.25 0.35 0.75 1"/></material>
  <material name="orange"><color rgba="0.95 0.45 0.1 1"/></material>
  <link name="base"><visual><geometry><mesh filename="package://arm/meshes/base.stl"/></geometry><material name="steel"/></visual></link>
  <link name="column"><visual><origin xyz="0 0 0.3"/><geometry><mesh filename="package://arm/meshes/column.stl"/></geometry><material name="orange"/></visual></link>
  <link name="forearm"><visual><geometry><mesh filename="../meshes/forearm.stl"/></geometry><material name="steel"/></visual></link>
  <link name="tool"/>
  <joint name="turn" type="revolute"><parent link="base"/><child link="column"/><origin xyz="0 0 0.05"/><axis xyz="0 0 1"/><limit lower="-3.14" upper="3.14" effort="20" velocity="1"/></joint>
  <joint name="slide" type="prismatic"><parent link="column"/><child link="forearm"/><origin xyz="0.2 0 0.5"/><axis xyz="1 0 0"/><limit lower="0" upper="0.2" effort="20" velocity="0.5"/></joint>
  <joint name="flange" type="fixed"><parent link="forearm"/><child link="tool"/><origin xyz="0.25 0 0"/></joint>
</robot>
`;
const PACKAGE: Record<string, Buffer> = {
  'arm/urdf/arm.urdf': Buffer.from(ARM_URDF),
  'arm/meshes/base.stl': stlBox([0.4, 0.4, 0.1]),
  'arm/meshes/column.stl': stlBox([0.1, 0.1, 0.6]),
  'arm/meshes/forearm.stl': stlBox([0.5, 0.08, 0.08]),
};

describe('a URDF robot on its listing page (issue 40)', () => {
  let t: TestApp;
  let b: ConsoleBrowser;
  let seller: { accountId: string; key: string };
  let packaged: { id: string };
  let bare: { id: string };
  let onnx: { id: string };

  beforeAll(async () => {
    t = await startTestApp();
    b = await consoleBrowser(t);
    seller = await t.accountWithKey({ scopes: ['models:upload', 'listings:read', 'datasets:upload', 'datasets:read', 'payouts:read', 'listings:write'], name: 'Arm Works' });
    // The package: a dataset whose shards are the URDF and its meshes, as laid out on disk.
    const dataset = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Slide arm package', type: 'dataset' } });
    for (const [name, bytes] of Object.entries(PACKAGE)) {
      const minted = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: seller.key, body: { name, size: bytes.length } });
      expect((await t.storage('PUT', minted.body.upload_url, { payload: bytes })).status).toBe(200);
    }
    expect((await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key: seller.key })).status).toBe(200);
    packaged = dataset.body;
    // A URDF alone: the meshes it names are not in the listing.
    const robot = await upload(t, seller.key, 'arm.urdf', urdfRobot());
    const model = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(robot, { title: 'Two link arm', type: 'robot-description' }) });
    expect(model.status).toBe(201);
    bare = model.body;
    onnx = await publishModel(t, seller.key, { title: 'Grasp policy' });
    // With a model card, what is inside is the narrow column beside it.
    const card = '# Grasp policy\n\nA two-layer policy: four observations in, two actions out.';
    expect((await t.request('PATCH', `/v1/models/${onnx.id}`, { key: seller.key, body: { readme: card } })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  /** Opens a page as the seller, recording every request the page makes. */
  const openAsSeller = async () => {
    const { page, errors } = await b.open();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await b.signIn(page, 'creator', seller.key);
    return { page, errors, requests };
  };

  /** The canvas's pixels unlike the scene's background (#f3f4f6), out of all of them. */
  const paintedShare = async (page: Page) =>
    Number(
      await page.evaluate(`(() => {
        const canvas = document.querySelector('[data-robot] canvas');
        const copy = document.createElement('canvas');
        copy.width = canvas.width;
        copy.height = canvas.height;
        const context = copy.getContext('2d');
        context.drawImage(canvas, 0, 0);
        const pixels = context.getImageData(0, 0, copy.width, copy.height).data;
        let painted = 0;
        for (let i = 0; i < pixels.length; i += 4) if (Math.abs(pixels[i] - 243) + Math.abs(pixels[i + 1] - 244) + Math.abs(pixels[i + 2] - 246) > 30) painted++;
        return painted / (pixels.length / 4);
      })()`),
    );

  it('draws the robot in 3D from its package: the meshes loaded, the canvas painted, every file from the console itself', async () => {
    const { page, errors, requests } = await openAsSeller();
    const res = await page.goto(`${b.base}/console/listings/${packaged.id}`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    await page.waitForSelector('[data-robot][data-drawn], [data-robot][data-failed]', { timeout: 30_000 });
    expect(await page.$eval('[data-robot]', (f) => f.getAttribute('data-failed'))).toBeNull();
    expect(await page.$eval('[data-robot]', (f) => f.getAttribute('data-drawn'))).toBe('3');
    // The three meshes and a grid, not an empty background: a fair share of the canvas is drawn.
    expect(await paintedShare(page)).toBeGreaterThan(0.02);
    // The joint tree beside it: the root, each joint with its type, down to the tool.
    expect(await page.$$eval('[data-joint-tree] [data-joint]', (els) => els.map((el) => el.getAttribute('data-joint')))).toEqual(['turn', 'slide', 'flange']);
    expect(await page.$eval('[data-joint="slide"]', (el) => el.textContent)).toContain('prismatic');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'listing-robot-3d.png'), fullPage: true });
    expect(await axe(page)).toEqual([]);
    expect(errors).toEqual([]);

    // Nothing from anywhere but the console: three.js and urdf-loader from its hashed assets, the URDF and meshes from the listing's file route.
    expect(requests.filter((url) => !url.startsWith(`${b.base}/`))).toEqual([]);
    const assets = requests.filter((url) => url.includes('/console/assets/')).map((url) => url.split('/').pop());
    expect(assets).toEqual(expect.arrayContaining([expect.stringMatching(/^robot-viewer\.[0-9a-f]{10}\.js$/), expect.stringMatching(/^three\.[0-9a-f]{10}\.core\.js$/), expect.stringMatching(/^URDFLoader\.[0-9a-f]{10}\.js$/)]));
    const files = requests.filter((url) => url.includes(`/console/listings/${packaged.id}/file?`)).map((url) => new URL(url).searchParams.get('name'));
    expect(files.sort()).toEqual(['arm/meshes/base.stl', 'arm/meshes/column.stl', 'arm/meshes/forearm.stl', 'arm/urdf/arm.urdf']);
    const served = await page.evaluate(async (url) => {
      const r = await fetch(url);
      return { status: r.status, cache: r.headers.get('cache-control'), type: r.headers.get('content-type') };
    }, requests.find((url) => url.includes('/console/assets/three.'))!);
    expect(served).toEqual({ status: 200, cache: 'public, max-age=31536000, immutable', type: 'application/javascript; charset=utf-8' });
  });

  it('shows the joint tree, and which meshes are missing, when the meshes are not in the package; three.js is not loaded', async () => {
    const { page, errors, requests } = await openAsSeller();
    await page.goto(`${b.base}/console/listings/${bare.id}`, { waitUntil: 'load' });
    expect(await page.$eval('[data-not-drawn]', (el) => el.textContent)).toContain('package://arm/meshes/base_link.stl');
    expect(await page.$$eval('[data-joint-tree] [data-link]', (els) => els.map((el) => el.getAttribute('data-link')))).toEqual(['base_link', 'link_1', 'link_2']);
    expect(await page.$eval('[data-joint="joint_1"]', (el) => el.textContent!.replace(/\s+/g, ' '))).toBe('joint_1 revolute axis (0 0 1) limits -3 to 3');
    expect(await page.$('[data-robot], canvas')).toBeNull();
    expect(requests.filter((url) => url.includes('/console/assets/three.') || url.includes('/file?'))).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'listing-robot-joint-tree.png'), fullPage: true });
    expect(await axe(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('serves the package files to the listing’s owner only, and only the files a robot is drawn from', async () => {
    const owner = new ConsoleClient(t, '10.7.0.1');
    await owner.signIn('creator', seller.key);
    const file = (id: string, name: string) => `/console/listings/${id}/file?${new URLSearchParams({ name })}`;
    const urdf = await owner.get(file(packaged.id, 'arm/urdf/arm.urdf'));
    expect(urdf.status).toBe(200);
    expect(urdf.text).toBe(ARM_URDF);
    expect(urdf.headers['content-type']).toBe('application/octet-stream');
    expect(urdf.headers['cache-control']).toBe('no-store');
    expect((await owner.get(file(packaged.id, 'arm/meshes/nowhere.stl'))).status).toBe(404);
    // A model's ONNX file is not a robot's: not served here (buyers download it through the API).
    expect((await owner.get(file(onnx.id, 'policy.onnx'))).status).toBe(404);

    const other = await t.accountWithKey({ scopes: ['listings:read', 'datasets:read'] });
    const stranger = new ConsoleClient(t, '10.7.0.2');
    await stranger.signIn('creator', other.key);
    expect((await stranger.get(file(packaged.id, 'arm/urdf/arm.urdf'))).status).toBe(404);
    const signedOut = await new ConsoleClient(t, '10.7.0.3').get(file(packaged.id, 'arm/urdf/arm.urdf'));
    expect(signedOut.status).toBe(303);
  });

  it('shows object-valued inspection fields as tables inside the card, not JSON, and nothing overflows its edge', async () => {
    const { page, errors } = await openAsSeller();
    await b.visit(page, errors, `/console/listings/${onnx.id}`, 'listing-inspection-beside-card');
    const text = await page.$eval('[data-inspection]', (aside) => aside.textContent!);
    expect(text).not.toMatch(/[{}"]/);
    const operators = await page.$$eval('[data-inspection] table.inspection > tbody > tr', (rows) =>
      rows.filter((r) => r.querySelector('th')!.textContent === 'operators').map((r) => [...r.querySelectorAll('table.pairs tr')].map((tr) => [...tr.children].map((c) => c.textContent))),
    );
    expect(operators).toEqual([[['Gemm', '2'], ['Tanh', '1']]]);
    // Every nested table ends inside the card's padding, and the card does not scroll sideways.
    const edges = await page.evaluate(`(() => {
      const aside = document.querySelector('[data-inspection]');
      const box = aside.getBoundingClientRect();
      const padding = parseFloat(getComputedStyle(aside).paddingRight);
      return { overflow: aside.scrollWidth - aside.clientWidth, outside: [...aside.querySelectorAll('table')].filter((table) => table.getBoundingClientRect().right > box.right - padding + 0.5).length };
    })()`);
    expect(edges).toEqual({ overflow: 0, outside: 0 });
    expect(await textOf(page)).toContain('Grasp policy');
  });
});
