import Stripe from 'stripe';
import { signatureHeader } from '../../src/webhooks/signature';
import { verifyWebhook, WebhookSignatureError } from '../../src/webhooks/verify-signature';

const secret = 'whsec_test_abcdefghijklmnopqrstuvwxyz012345';
const body = JSON.stringify({ id: 'evt_1', type: 'payout.paid', created: 1700000000, data: { payout: { amount_cents: 100 } } });
const stripe = new Stripe('sk_test_unused');

describe('verifyWebhook (receiver helper)', () => {
  it('accepts what the service signs, as a string or raw bytes', () => {
    const header = signatureHeader(secret, body);
    expect(verifyWebhook(body, header, secret)).toEqual(JSON.parse(body));
    expect(verifyWebhook(Buffer.from(body), header, secret).id).toBe('evt_1');
  });

  it('agrees with stripe-node on the scheme', () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret });
    expect(verifyWebhook(body, header, secret).id).toBe('evt_1');
    expect((stripe.webhooks.constructEvent(body, signatureHeader(secret, body), secret) as any).id).toBe('evt_1');
  });

  it('accepts any matching v1 of several (secret rotation)', () => {
    const [t, v1] = signatureHeader(secret, body).split(',');
    const other = signatureHeader('whsec_test_other', body).split(',')[1];
    expect(verifyWebhook(body, `${t},${other},${v1}`, secret).id).toBe('evt_1');
  });

  it('verifies a header the service signed with two secrets (a rotation) with either of them, here and in stripe-node', () => {
    const old = 'whsec_test_old';
    const header = signatureHeader([secret, old], body);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const s of [secret, old]) {
      expect(verifyWebhook(body, header, s).id).toBe('evt_1');
      expect((stripe.webhooks.constructEvent(body, header, s) as any).id).toBe('evt_1');
    }
    expect(() => verifyWebhook(body, header, 'whsec_test_other')).toThrow(WebhookSignatureError);
  });

  it.each([
    ['a missing header', undefined],
    ['an empty header', ''],
    ['a header without t', 'v1=' + 'a'.repeat(64)],
    ['a header without v1', `t=${Math.floor(Date.now() / 1000)}`],
    ['a non-numeric t', 't=abc,v1=' + 'a'.repeat(64)],
  ])('rejects %s', (_what, header) => {
    expect(() => verifyWebhook(body, header as any, secret)).toThrow(WebhookSignatureError);
  });

  it('rejects a timestamp more than 300 s away, either way', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(() => verifyWebhook(body, signatureHeader(secret, body, now - 301), secret)).toThrow(/tolerance/);
    expect(() => verifyWebhook(body, signatureHeader(secret, body, now + 301), secret)).toThrow(/tolerance/);
    expect(verifyWebhook(body, signatureHeader(secret, body, now - 299), secret).id).toBe('evt_1');
  });

  it('rejects a wrong secret, a changed body and re-serialized JSON', () => {
    const header = signatureHeader(secret, body);
    expect(() => verifyWebhook(body, header, 'whsec_test_wrong')).toThrow(/no v1 signature matches/);
    expect(() => verifyWebhook(body.replace('100', '999'), header, secret)).toThrow(WebhookSignatureError);
    expect(() => verifyWebhook(JSON.stringify(JSON.parse(body), null, 2), header, secret)).toThrow(WebhookSignatureError);
    expect(() => verifyWebhook(body, header.replace(/v1=../, 'v1=zz'), secret)).toThrow(WebhookSignatureError);
  });
});
