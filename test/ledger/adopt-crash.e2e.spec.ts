import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../src/payments/payment-processor';
import { publishModel } from '../catalog/catalog-client';
import { buy, eventsOfType } from '../commerce/commerce-client';
import { startTestApp } from '../support/app';
import { onPostgresServer } from '../support/database';
import { eventually } from '../support/eventually';
import { KillableWorker } from '../support/kill-mid-append';

/** Short leases: a killed instance's projections and subscribers are free again within a second. */
const env = { CONSUMER_LEASE_TTL_MS: '1000' };

/**
 * `svc ledger adopt` (issue 38, defect 5) in a service process SIGKILLed while it appends the
 * adoption: nothing of it is booked, reconcile still lists the refund, and adopting it again
 * (from another instance) books it once; a third adoption is 409. Two processes cannot share
 * PGlite, and the request is held inside the event store's append by a lock on its streams
 * table, so this runs on the Postgres server with the events in Postgres.
 */
const runs = onPostgresServer && process.env.TEST_EVENTSTORE !== 'standin';
(runs ? describe : describe.skip)('svc ledger adopt across kill -9', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let worker: KillableWorker;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-adopt-'));

  beforeAll(async () => {
    t = await startTestApp({ env });
    worker = new KillableWorker(t, dataDir, env);
  });
  afterAll(async () => {
    worker?.stop();
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const reconcile = async () => (await t.admin('GET', '/admin/ledger/reconcile?mode=test')).body;
  const booked = async (refundId: string) => ({
    adopted: (await eventsOfType(t, 'ProcessorMovementAdopted')).filter((e) => e.data.processor_id === refundId).length,
    refunds: (await eventsOfType(t, 'RefundRecorded')).filter((e) => e.data.processor_refund_id === refundId).length,
  });

  /** A purchase with a refund the processor made and the books never recorded. */
  async function orphanedRefund(title: string, key: string): Promise<string> {
    const seller = await t.accountWithKey({ name: `Seller ${title}` });
    const buyer = await t.accountWithKey({ name: `Buyer ${title}`, scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title, price_cents: 2000 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.session_id === session.id)!.data;
    const orphan = await t.app.get<PaymentProcessor>(PAYMENT_PROCESSOR).refund({ mode: 'test', paymentReference: purchase.payment_reference, idempotencyKey: key, amountCents: 501 });
    await eventually(async () => (await reconcile()).missing_in_ledger.some((i: any) => i.processor_id === orphan.refundId), 15000, 'reconcile to list the orphan');
    return orphan.refundId;
  }

  /** Sends the adoption to a worker process, holds it inside an append by a lock on `table`, and SIGKILLs the process there. */
  const killMidAdoption = (refundId: string, table: 'events' | 'streams') =>
    worker.killMidAppend('/admin/ledger/adopt', { mode: 'test', processor_id: refundId, reason: 'killed mid-adoption' }, table);

  const adopt = (refundId: string, reason: string) => t.admin('POST', '/admin/ledger/adopt', { mode: 'test', processor_id: refundId, reason });

  async function expectBookedOnce(refundId: string): Promise<void> {
    expect(await booked(refundId)).toEqual({ adopted: 1, refunds: 1 });
    // The journal is a read model: what the killed process appended reaches it when this instance's projection reads it.
    let missing: unknown[] = [];
    await eventually(async () => (missing = (await reconcile()).missing_in_ledger.filter((i: any) => i.processor_id === refundId)).length === 0, 15000, 'the journal to hold the adopted refund').catch(() => undefined);
    expect(missing).toEqual([]);
    expect((await t.admin('GET', '/admin/ledger/trial-balance?mode=test')).body.balanced).toBe(true);
    // Adopted again once booked: 409, nothing doubled.
    const again = await adopt(refundId, 'once more');
    expect([again.status, again.body.error.code]).toEqual([409, 'already_booked']);
    expect(await booked(refundId)).toEqual({ adopted: 1, refunds: 1 });
  }

  /**
   * Where exactly the kill lands is the lock's and the scheduler's say (the worker's other
   * appends wait on it too): before the adoption's append, or after it and before the seller's
   * ledger has the refund. Either way, once the instance still running has caught up, the
   * books hold the adoption and its refund both or neither; a retry books it (200) or finds it
   * booked (409), and it ends booked once.
   */
  async function expectNothingLostOrDoubled(refundId: string): Promise<void> {
    let seen = await booked(refundId);
    await eventually(async () => {
      seen = await booked(refundId);
      return seen.adopted === seen.refunds;
    }, 15000, 'the adoption and its refund to agree');
    expect([{ adopted: 0, refunds: 0 }, { adopted: 1, refunds: 1 }]).toContainEqual(seen);
    const retried = await adopt(refundId, 'retried after the crash');
    if (seen.adopted === 0) {
      expect([retried.status, retried.body.purchase?.amount_refunded_cents]).toEqual([200, 501]);
      expect((await eventsOfType(t, 'ProcessorMovementAdopted')).find((e) => e.data.processor_id === refundId)!.data).toMatchObject({ actor: 'admin', reason: 'retried after the crash' });
    } else {
      expect([retried.status, retried.body.error.code]).toEqual([409, 'already_booked']);
    }
    await expectBookedOnce(refundId);
  }

  it('loses and doubles nothing when the process dies in an append of the adoption (events locked)', async () => {
    const refundId = await orphanedRefund('Killed with the events locked', 'orphan-crash-1');
    await killMidAdoption(refundId, 'events');
    await expectNothingLostOrDoubled(refundId);
  });

  it('loses and doubles nothing when the process dies in an append of the adoption (streams locked)', async () => {
    const refundId = await orphanedRefund('Killed with the streams locked', 'orphan-crash-2');
    await killMidAdoption(refundId, 'streams');
    await expectNothingLostOrDoubled(refundId);
  });
});
