import { CheckoutCommand, CheckoutState, decide, duplicateOf, evolve, fold, purchaseOf } from '../../src/commerce/checkout.decider';
import type { CheckoutEvent, CheckoutSessionOpened } from '../../src/commerce/events';
import { ApiError } from '../../src/platform/errors';
import { evolve as evolveEntitlement, noEntitlement } from '../../src/commerce/entitlement.decider';

const NOW = '2026-01-01T00:00:00.000Z';
const opened: CheckoutSessionOpened = {
  session_id: 'cs_test_AAAAAAAAAAAAAAAAAAAAAAAA',
  mode: 'test',
  purpose: 'purchase',
  buyer_account_id: 'acct_buyer',
  amount_cents: 1500,
  currency: 'usd',
  asset: { id: 'lst_1', slug: 'arm', title: 'Arm' },
  seller_account_id: 'acct_seller',
  purchase_id: 'pur_1',
  key_id: null,
  success_url: null,
  cancel_url: null,
  processor: 'sandbox',
  expires_at: '2026-01-01T00:30:00.000Z',
  created_at: NOW,
};
const complete = (ownedBy: string | null): CheckoutCommand => ({ type: 'Complete', now: NOW, payment_reference: 'pay_1', listing: null, refuseExpired: true, ownedBy });
const apply = (state: CheckoutState, events: CheckoutEvent[]) => events.reduce<CheckoutState | undefined>(evolve, state)!;
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as ApiError).code;
  }
  return undefined;
};

describe('checkout decider', () => {
  const open = fold([{ type: 'CheckoutSessionOpened', data: opened }])!;

  it('records a purchase when nobody holds the asset, and a duplicate payment when another purchase does', () => {
    expect(decide(complete(null), open).map((e) => e.type)).toEqual(['PurchaseCompleted']);
    const [duplicate] = decide(complete('pur_0'), open);
    expect(duplicate).toMatchObject({ type: 'DuplicatePaymentReceived', data: { owned_by_purchase_id: 'pur_0', payment_reference: 'pay_1', amount_cents: 1500 } });

    const paidTwice = apply(open, [duplicate]);
    expect([purchaseOf(paidTwice), duplicateOf(paidTwice)?.owned_by_purchase_id]).toEqual([undefined, 'pur_0']);
    // A duplicate is no purchase: it cannot be refunded as one, and completes once.
    expect(codeOf(() => decide({ type: 'RecordRefund', now: NOW, processor_refund_id: 're_1' }, paidTwice))).toBe('invalid_request');
    expect(decide(complete(null), paidTwice)).toEqual([]);
    const refunded = apply(paidTwice, decide({ type: 'RecordDuplicateRefund', now: NOW, processor_refund_id: 're_1', settled: true }, paidTwice));
    expect(refunded.duplicateRefunded).toMatchObject({ processor_refund_id: 're_1', payment_reference: 'pay_1', settled: true });
    expect(decide({ type: 'RecordDuplicateRefund', now: NOW, processor_refund_id: 're_2', settled: true }, refunded)).toEqual([]);
  });

  it('refunds a purchase once: a second refund throws already_refunded', () => {
    const paid = apply(open, decide(complete(null), open));
    const refunded = apply(paid, decide({ type: 'RecordRefund', now: NOW, processor_refund_id: 're_1' }, paid));
    expect(purchaseOf(refunded)?.status).toBe('refunded');
    expect(codeOf(() => decide({ type: 'RecordRefund', now: NOW, processor_refund_id: 're_2' }, refunded))).toBe('already_refunded');
  });

  it('an entitlement names the last session opened, and a refund ends only its own purchase', () => {
    const key = { mode: 'test' as const, buyer_account_id: 'acct_buyer', asset_id: 'lst_1' };
    let state = evolveEntitlement(noEntitlement(), { type: 'AssetCheckoutOpened', data: { ...key, session_id: 'cs_1', opened_at: NOW } });
    state = evolveEntitlement(state, { type: 'AssetEntitled', data: { ...key, purchase_id: 'pur_1', session_id: 'cs_1', entitled_at: NOW } });
    expect(evolveEntitlement(state, { type: 'AssetEntitlementEnded', data: { ...key, purchase_id: 'pur_other', ended_at: NOW } }).owner).toEqual({ purchase_id: 'pur_1', session_id: 'cs_1' });
    expect(evolveEntitlement(state, { type: 'AssetEntitlementEnded', data: { ...key, purchase_id: 'pur_1', ended_at: NOW } })).toEqual({ lastSessionId: 'cs_1', owner: null });
  });
});
