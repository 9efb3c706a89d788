import type { components } from '../../clients/typescript/src/generated/api';
import { publishModel } from '../catalog/catalog-client';
import { buy, DISPUTED } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';

/**
 * Issue 44: every balance transaction line keeps the spec's `source` shape
 * `{ purchase_id, asset: { slug, title } }` (spec part 2), so a client typed on the spec reads
 * each line type. `SpecBalanceTransaction` is written from the spec's table, by hand, as such a
 * client would; the CLI's generated type (from the OpenAPI document) must be assignable to it,
 * and every line the API answers must have that shape at run time.
 */
interface SpecBalanceTransaction {
  id: string;
  type: string;
  amount_cents: number;
  fee_cents: number;
  net_cents: number;
  currency: string;
  status: string;
  created_at: string;
  source: { purchase_id: string | null; asset: { slug: string; title: string } | null };
  description: string;
}

// A compile-time check (ts-jest is transpile-only; CI's `tsc --noEmit` checks test files): the
// document's type is one the spec's client accepts.
type Generated = components['schemas']['BalanceTransaction'];
const generatedFitsTheSpec = (line: Generated): SpecBalanceTransaction => line;

/** The spec's shape checked at run time, line by line; returns what does not fit. */
function misfits(line: any): string[] {
  const problems: string[] = [];
  const s = line.source;
  if (!s || typeof s !== 'object') return ['source is not an object'];
  if (!('purchase_id' in s) || (s.purchase_id !== null && typeof s.purchase_id !== 'string')) problems.push('source.purchase_id');
  if (!('asset' in s)) problems.push('source.asset missing');
  else if (s.asset !== null && (typeof s.asset.slug !== 'string' || typeof s.asset.title !== 'string')) problems.push('source.asset');
  for (const field of ['amount_cents', 'fee_cents', 'net_cents']) if (!Number.isInteger(line[field])) problems.push(field);
  for (const field of ['id', 'type', 'currency', 'status', 'created_at', 'description']) if (typeof line[field] !== 'string') problems.push(field);
  return problems;
}

describe('balance transaction lines keep the spec source shape, every line type (issue 44)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('sale, refund, dispute, dispute_reversal and payout lines all read as { purchase_id, asset }', async () => {
    const seller = await t.accountWithKey({ name: 'Shape Seller' });
    const buyer = await t.accountWithKey();
    const sold = await publishModel(t, seller.key, { title: 'Shape Arm', price_cents: 1000 });
    const refunded = await publishModel(t, seller.key, { title: 'Shape Gripper', price_cents: 2000 });
    const disputed = await publishModel(t, seller.key, { title: 'Shape Wrist', price_cents: 3000 });
    await buy(t, buyer.key, sold.slug);
    await buy(t, buyer.key, refunded.slug);
    await buy(t, buyer.key, disputed.slug, DISPUTED);

    const purchases = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items;
    const purchaseOf = (slug: string) => purchases.find((p: any) => p.asset.slug === slug);
    expect((await t.admin('POST', `/admin/purchases/${purchaseOf(refunded.slug).id}/refund`, {})).status).toBe(200);
    const disputes = await eventually(async () => {
      const open = (await t.admin('GET', '/admin/disputes?mode=test&status=open')).body.items;
      return open.length ? open : undefined;
    }, 15000, 'the dispute');
    expect((await t.admin('POST', `/admin/disputes/${disputes[0].id}/close`, { outcome: 'won' })).status).toBe(200);
    const lines = async () => (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.items as any[];
    await eventually(async () => (await lines()).some((l) => l.type === 'dispute_reversal'), 15000, 'the dispute reversal line');
    expect((await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: seller.accountId })).status).toBe(200);
    const items = await eventually(async () => {
      const all = await lines();
      return all.some((l) => l.type === 'payout') ? all : undefined;
    }, 15000, 'the payout line');

    // Every line type there, each fitting the spec's shape.
    expect(new Set(items.map((l) => l.type))).toEqual(new Set(['sale', 'refund', 'dispute', 'dispute_reversal', 'payout']));
    for (const line of items) expect({ type: line.type, misfits: misfits(line) }).toEqual({ type: line.type, misfits: [] });

    // Read through the spec's type, as a typed client would: purchase lines name their purchase and asset.
    const typed: SpecBalanceTransaction[] = items.map((l) => generatedFitsTheSpec(l as Generated));
    const sourceOf = (type: string, slug?: string) => typed.filter((l) => l.type === type && (!slug || l.source.asset?.slug === slug)).map((l) => l.source);
    expect(sourceOf('sale', sold.slug)).toEqual([{ purchase_id: purchaseOf(sold.slug).id, asset: { slug: sold.slug, title: 'Shape Arm' } }]);
    expect(sourceOf('refund')).toEqual([{ purchase_id: purchaseOf(refunded.slug).id, asset: { slug: refunded.slug, title: 'Shape Gripper' } }]);
    const disputedSource = { purchase_id: purchaseOf(disputed.slug).id, asset: { slug: disputed.slug, title: 'Shape Wrist' } };
    expect(sourceOf('dispute')).toEqual([disputedSource]);
    expect(sourceOf('dispute_reversal')).toEqual([disputedSource]);

    // A payout line: no purchase, no asset, and its payout named beside them.
    const payouts = (await t.request('GET', '/v1/payouts', { key: seller.key })).body.items;
    expect(sourceOf('payout')).toEqual([{ purchase_id: null, asset: null, payout_id: payouts[0].id }]);

    // The CLI's ledger export, read from the same lines, still names the payout in its own column.
    const exported = (await t.admin('GET', `/admin/ledger/export?account=${seller.accountId}&mode=test`)).body.items;
    expect(exported.find((l: any) => l.type === 'payout').source).toEqual({ purchase_id: null, asset: null, payout_id: payouts[0].id });

    // The books agree with the log after all of it.
    expect((await t.admin('GET', `/admin/ledger/verify?account=${seller.accountId}&mode=test`)).body.ok).toBe(true);
  });
});
