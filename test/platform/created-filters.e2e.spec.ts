import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint, ENCRYPTION_KEY } from '../webhooks/helpers';
import { startReceiver } from '../webhooks/receiver';

/**
 * created[gt|gte|lt|lte] on every list that has a creation time (issue 39 item 4, issue 38
 * defect 8): each bound, given an item's own printed creation time, keeps exactly the items a
 * client would compute from the printed times; an instant without an offset is 400 naming
 * the field.
 */
describe('created filters on every list with a creation time', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  let endpointId: string;
  let receiver: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
    seller = await t.accountWithKey({ name: 'Created Seller' });
    buyer = await t.accountWithKey({ name: 'Created Buyer' });
    receiver = await startReceiver();
    endpointId = (await createEndpoint(t, seller.key, receiver.url, ['listing.published', 'listing.purchased'])).id;
    const models = [];
    for (const title of ['Created A', 'Created B', 'Created C']) models.push(await publishModel(t, seller.key, { title, price_cents: 1000 }, title));
    await buy(t, buyer.key, models[0].slug);
    await eventually(async () => (await t.request('GET', '/v1/balance', { key: seller.key })).body.available_cents > 0, 15000, 'the first sale');
    expect((await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: seller.accountId })).status).toBe(200);
    await buy(t, buyer.key, models[1].slug);
    await buy(t, buyer.key, models[2].slug);
    await eventually(async () => (await t.request('GET', '/v1/balance', { key: seller.key })).body.available_cents > 0, 15000, 'the later sales');
    expect((await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: seller.accountId })).status).toBe(200);
    await eventually(async () => (await t.request('GET', `/v1/webhook_endpoints/${endpointId}/events?limit=100`, { key: seller.key })).body.items.length >= 5, 15000, 'the deliveries');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const get = async (url: string, key: string) => {
    const res = await t.request('GET', url, { key });
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.text}`);
    return res.body.items as any[];
  };

  const LISTS: [string, () => string, (item: any) => number, (item: any) => string][] = [
    ['/v1/balance_transactions', () => seller.key, (i) => Date.parse(i.created_at), (i) => i.created_at],
    ['/v1/payouts', () => seller.key, (i) => Date.parse(i.created_at), (i) => i.created_at],
    ['/v1/purchases', () => buyer.key, (i) => Date.parse(i.created_at), (i) => i.created_at],
    ['/v1/listings', () => seller.key, (i) => Date.parse(i.created_at), (i) => i.created_at],
    ['/v1/models', () => buyer.key, (i) => Date.parse(i.created_at), (i) => i.created_at],
    ['/v1/webhook_endpoints/{id}/events', () => seller.key, (i) => Date.parse(i.created_at), (i) => i.created_at],
    // Events print `created` in unix seconds: the bound is the whole second.
    ['/v1/events', () => seller.key, (i) => i.created * 1000, (i) => String(i.created)],
  ];
  const CMP: Record<string, (item: number, bound: number, unit: number) => boolean> = {
    gt: (item, bound, unit) => item >= bound + unit,
    gte: (item, bound) => item >= bound,
    lt: (item, bound) => item < bound,
    lte: (item, bound, unit) => item < bound + unit,
  };

  it.each(LISTS)('%s keeps, for each bound, exactly the items whose printed creation time is within it', async (path, keyOf, at, printed) => {
    const url = path.replace('{id}', endpointId);
    const all = await get(`${url}?limit=100`, keyOf());
    expect(all.length).toBeGreaterThanOrEqual(2);
    const unit = path === '/v1/events' ? 1000 : 1;
    for (const pivot of [all[0], all[Math.floor(all.length / 2)], all[all.length - 1]]) {
      for (const bound of ['gt', 'gte', 'lt', 'lte']) {
        const got = await get(`${url}?limit=100&created[${bound}]=${encodeURIComponent(printed(pivot))}`, keyOf());
        const expected = all.filter((item) => CMP[bound](at(item), at(pivot), unit));
        expect({ bound, pivot: printed(pivot), ids: got.map((i) => i.id) }).toEqual({ bound, pivot: printed(pivot), ids: expected.map((i) => i.id) });
      }
    }
    // Both ends at once, and the same instant with another offset.
    const [newest, oldest] = [all[0], all[all.length - 1]];
    expect((await get(`${url}?limit=100&created[gte]=${encodeURIComponent(printed(oldest))}&created[lte]=${encodeURIComponent(printed(newest))}`, keyOf())).length).toBe(all.length);
    if (unit === 1) {
      const shifted = new Date(at(oldest) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
      expect((await get(`${url}?limit=100&created[gte]=${encodeURIComponent(shifted)}`, keyOf())).map((i) => i.id)).toEqual(all.map((i) => i.id));
    }
  });

  it.each(LISTS.map(([path, keyOf]) => [path, keyOf] as const))('%s answers 400 naming the field for an instant without an offset, or no instant', async (path, keyOf) => {
    const url = path.replace('{id}', endpointId);
    for (const [field, value] of [['created[gt]', '2026-01-01T00:00:00'], ['created[lte]', '2026-01-01'], ['created[lt]', 'yesterday'], ['created[gte]', '2026-02-30T00:00:00Z']]) {
      const res = await t.request('GET', `${url}?${field}=${encodeURIComponent(value)}`, { key: keyOf() });
      expect({ field, value, status: res.status, code: res.body.error?.code }).toEqual({ field, value, status: 400, code: 'validation_failed' });
      expect(res.body.error.message).toContain(`Invalid field "${field}"`);
      expect(res.body.error.errors).toEqual([{ field, code: 'invalid', message: res.body.error.message }]);
    }
    const noOffset = await t.request('GET', `${url}?created[gt]=2026-01-01T00:00:00`, { key: keyOf() });
    expect(noOffset.body.error.message).toContain('has no offset');
  });
});
