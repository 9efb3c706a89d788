import { EntitlementErrors, EntitlementEvent, entitlementDecider } from '../../src/commerce/entitlement.decider';
import { deciderSpec } from '../support/decider-spec';

const key = { mode: 'test' as const, buyer_account_id: 'acct_buyer', asset_id: 'lst_asset' };
const opened = (session_id: string): EntitlementEvent => ({ type: 'AssetCheckoutOpened', data: { ...key, session_id, opened_at: '2026-01-01T00:00:00.000Z' } });
const entitled = (purchase_id: string, session_id: string): EntitlementEvent => ({
  type: 'AssetEntitled',
  data: { ...key, purchase_id, session_id, entitled_at: '2026-01-01T00:01:00.000Z' },
});
const spec = deciderSpec(entitlementDecider);

/** One purchase per buyer, asset and mode (decisions section 3), decided on the entitlement stream. */
describe('entitlement decider', () => {
  it('names a new session as the open one', () => {
    spec.given([opened('cs_1')]).when({ type: 'NameCheckout', key, session_id: 'cs_2', opened_at: 'T' }).then([{ type: 'AssetCheckoutOpened', data: { ...key, session_id: 'cs_2', opened_at: 'T' } }]);
  });

  it('records nothing when the session is the one named already', () => {
    spec.given([opened('cs_1')]).when({ type: 'NameCheckout', key, session_id: 'cs_1', opened_at: 'T' }).then([]);
  });

  it('refuses a checkout of an asset the buyer holds', () => {
    const refusal = EntitlementErrors.alreadyBought();
    spec.given([opened('cs_1'), entitled('pur_1', 'cs_1')]).when({ type: 'NameCheckout', key, session_id: 'cs_2', opened_at: 'T' }).thenRefuses({ status: refusal.status, code: refusal.code, message: refusal.message });
  });

  it('entitles a paid session, and a second payment for a held asset changes nothing', () => {
    spec.given([opened('cs_1')]).when({ type: 'Entitle', key, purchase_id: 'pur_1', session_id: 'cs_1', entitled_at: 'T' }).then([{ type: 'AssetEntitled', data: { ...key, purchase_id: 'pur_1', session_id: 'cs_1', entitled_at: 'T' } }]);
    spec.given([entitled('pur_1', 'cs_1')]).when({ type: 'Entitle', key, purchase_id: 'pur_2', session_id: 'cs_2', entitled_at: 'T' }).then([]);
  });

  it('ends the holding purchase once; another purchase, or a repeat, ends nothing', () => {
    const end = (purchase_id: string) => ({ type: 'End' as const, key, purchase_id, ended_at: 'T' });
    spec.given([entitled('pur_1', 'cs_1')]).when(end('pur_1')).then([{ type: 'AssetEntitlementEnded', data: { ...key, purchase_id: 'pur_1', ended_at: 'T' } }]);
    spec.given([entitled('pur_1', 'cs_1')]).when(end('pur_9')).then([]);
    spec.given([entitled('pur_1', 'cs_1'), { type: 'AssetEntitlementEnded', data: { ...key, purchase_id: 'pur_1', ended_at: 'T' } }]).when(end('pur_1')).then([]);
  });
});
