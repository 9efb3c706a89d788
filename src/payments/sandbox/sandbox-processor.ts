import type { Database } from '../../database/database';
import { ApiError } from '../../platform/errors';
import { newId, randomBase62 } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import type {
  CheckoutRequest,
  DisputeOutcome,
  ProcessorDispute,
  FeeRequest,
  OpenedCheckout,
  PaymentProcessor,
  ProcessorFee,
  ProcessorRecord,
  ProcessorRecordsRequest,
  ProcessorRefund,
  RefundRequest,
  TransferRequest,
} from '../payment-processor';
import { TransferRefusedError } from '../payment-processor';

/**
 * The embedded processor: the hosted checkout is this service's own page
 * ({PUBLIC_BASE_URL}/checkout/{id}, see sandbox-checkout-page.ts); refunds and payouts settle
 * at once. Like a real processor it keeps its own books (sandbox_processor_records) of what it
 * charged, kept as fees, refunded and transferred, apart from our event log, so that
 * reconciliation compares two independent records.
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox' as const;
  readonly requiresPayoutDestination = false;

  constructor(
    private readonly publicBaseUrl: string,
    private readonly fee: { bps: number; fixedCents: number; disputeCents: number },
    private readonly db: Database,
  ) {}

  async openCheckout(request: CheckoutRequest): Promise<OpenedCheckout> {
    return { checkoutUrl: `${this.publicBaseUrl}/checkout/${request.sessionId}`, processorSessionId: request.sessionId };
  }

  /**
   * The card on the hosted page paid: the session is charged (once, however often its form is
   * posted) and the processor's fee on it kept. Returns the payment's id.
   */
  async charge(request: { mode: Mode; sessionId: string; amountCents: number; currency: string }): Promise<string> {
    return this.db.transaction(async (tx) => {
      const id = `sbx_pay_${randomBase62(24)}`;
      const { rowCount } = await tx.query(
        `INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, session_id)
         VALUES ($1, $2, 'charge', $3, $4, $5) ON CONFLICT (session_id) WHERE kind = 'charge' DO NOTHING`,
        [id, request.mode, request.amountCents, request.currency, request.sessionId],
      );
      if (rowCount === 1) {
        await tx.query(
          `INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, payment_id) VALUES ($1, $2, 'fee', $3, $4, $5)`,
          [`sbx_fee_${randomBase62(24)}`, request.mode, this.feeOn(request.amountCents), request.currency, id],
        );
        return id;
      }
      const { rows } = await tx.query<{ id: string }>(`SELECT id FROM sandbox_processor_records WHERE session_id = $1 AND kind = 'charge'`, [request.sessionId]);
      return rows[0].id;
    });
  }

  /** The fee kept on a payment it charged; undefined for a payment it never took. */
  async feeOf(request: FeeRequest): Promise<ProcessorFee | undefined> {
    const { rows } = await this.db.query<{ id: string; amount_cents: string }>(
      `SELECT id, amount_cents FROM sandbox_processor_records WHERE payment_id = $1 AND kind = 'fee'`,
      [request.paymentReference],
    );
    return rows[0] && { feeCents: Number(rows[0].amount_cents), processorFeeId: rows[0].id };
  }

  /**
   * The payment back, or part of it: what is asked, at most what is not refunded yet (all of
   * that when no amount is asked). The fee stays with the processor, as Stripe's does.
   * One transaction holding the payment's row: of refunds racing on one payment (several
   * instances, each with its own idempotency key), each sees what the others refunded, so
   * the payment is never refunded beyond its amount (issue 38, defect 6). A part larger than
   * what is left is 409 refund_exceeds_remaining, as a concurrent refund took the rest.
   */
  async refund(request: RefundRequest): Promise<ProcessorRefund> {
    return this.db.transaction(async (tx) => {
      const { rows: charges } = await tx.query<{ amount_cents: string; currency: string; mode: string }>(
        `SELECT amount_cents, currency, mode FROM sandbox_processor_records WHERE id = $1 AND kind = 'charge' FOR UPDATE`,
        [request.paymentReference],
      );
      const charge = charges[0];
      if (!charge || charge.mode !== request.mode) {
        throw new ApiError(402, 'refund_failed', `The processor has no payment ${request.paymentReference} to refund.`);
      }
      const { rows: earlier } = await tx.query<{ id: string; amount_cents: string }>('SELECT id, amount_cents FROM sandbox_processor_records WHERE idempotency_key = $1', [request.idempotencyKey]);
      if (earlier[0]) {
        // The same key for another amount is another request, as Stripe's idempotency_error: refused, nothing refunded.
        if (request.amountCents !== undefined && request.amountCents !== Number(earlier[0].amount_cents)) {
          throw new ApiError(400, 'idempotency_key_reused', `The idempotency key was used for a refund of ${earlier[0].amount_cents} cents, not ${request.amountCents}; use a new key for a new refund.`);
        }
        return { refundId: earlier[0].id, settled: true, amountCents: Number(earlier[0].amount_cents) };
      }
      const { rows: refunded } = await tx.query<{ sum: string }>(
        `SELECT COALESCE(sum(amount_cents), 0) AS sum FROM sandbox_processor_records WHERE payment_id = $1 AND kind = 'refund'`,
        [request.paymentReference],
      );
      const left = Number(charge.amount_cents) - Number(refunded[0].sum);
      const amount = request.amountCents ?? left;
      if (amount > left && left > 0) {
        throw new ApiError(409, 'refund_exceeds_remaining', `The processor cannot refund ${amount} cents of payment ${request.paymentReference}: only ${left} cents of it are not refunded (another refund took the rest).`);
      }
      if (amount < 1 || amount > left) {
        throw new ApiError(402, 'refund_failed', `The processor cannot refund ${amount} cents of payment ${request.paymentReference}: ${left} cents of it are not refunded.`);
      }
      const id = newId('re');
      await tx.query(
        `INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, payment_id, idempotency_key) VALUES ($1, $2, 'refund', $3, $4, $5, $6)`,
        [id, request.mode, amount, charge.currency, request.paymentReference, request.idempotencyKey],
      );
      return { refundId: id, settled: true, amountCents: amount };
    });
  }

  /**
   * The buyer's bank disputes a payment (the sandbox's card 4000000000000259): the processor
   * withdraws the whole payment and its dispute fee, once per payment.
   */
  async openDispute(request: { mode: Mode; paymentReference: string }): Promise<ProcessorDispute> {
    const { rows: charges } = await this.db.query<{ amount_cents: string; currency: string }>(
      `SELECT amount_cents, currency FROM sandbox_processor_records WHERE id = $1 AND kind = 'charge' AND mode = $2`,
      [request.paymentReference, request.mode],
    );
    if (!charges[0]) throw new ApiError(404, 'not_found', `The processor has no payment ${request.paymentReference} to dispute.`);
    const amount = Number(charges[0].amount_cents);
    const key = `dispute-${request.paymentReference}`;
    await this.db.query(
      `INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, fee_cents, currency, payment_id, idempotency_key)
       VALUES ($1, $2, 'dispute', $3, $4, $5, $6, $7) ON CONFLICT (idempotency_key) DO NOTHING`,
      [`sbx_dp_${randomBase62(24)}`, request.mode, amount + this.fee.disputeCents, this.fee.disputeCents, charges[0].currency, request.paymentReference, key],
    );
    const { rows } = await this.db.query<{ id: string; amount_cents: string; fee_cents: string }>(
      'SELECT id, amount_cents, fee_cents FROM sandbox_processor_records WHERE idempotency_key = $1',
      [key],
    );
    const fee = Number(rows[0].fee_cents);
    return { disputeId: rows[0].id, amountCents: Number(rows[0].amount_cents) - fee, feeCents: fee, reason: 'fraudulent' };
  }

  /** Won: the disputed amount comes back, the fee does not (as Stripe's). Lost: nothing moves. The first close is final. */
  async closeDispute(request: { mode: Mode; disputeId: string; outcome: DisputeOutcome }): Promise<DisputeOutcome> {
    const { rows: disputes } = await this.db.query<{ amount_cents: string; fee_cents: string; currency: string; payment_id: string }>(
      `SELECT amount_cents, fee_cents, currency, payment_id FROM sandbox_processor_records WHERE id = $1 AND kind = 'dispute' AND mode = $2`,
      [request.disputeId, request.mode],
    );
    const dispute = disputes[0];
    if (!dispute) throw new ApiError(404, 'not_found', `The processor has no dispute ${request.disputeId}.`);
    const won = request.outcome === 'won';
    const key = `dispute-close-${request.disputeId}`;
    await this.db.query(
      `INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, payment_id, idempotency_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (idempotency_key) DO NOTHING`,
      [
        newId(won ? 'sbx_dprev' : 'sbx_dplost'),
        request.mode,
        won ? 'dispute_reversal' : 'dispute_lost',
        won ? Number(dispute.amount_cents) - Number(dispute.fee_cents) : 0,
        dispute.currency,
        request.disputeId,
        key,
      ],
    );
    const { rows } = await this.db.query<{ kind: string }>('SELECT kind FROM sandbox_processor_records WHERE idempotency_key = $1', [key]);
    return rows[0].kind === 'dispute_reversal' ? 'won' : 'lost';
  }

  /** The sandbox settles payouts at once. */
  /**
   * Pays any payout (the sandbox needs no destination), except to its test destination that
   * refuses, `acct_sandboxRefuses` (set with svc payouts destination): refused as Stripe
   * refuses a destination it does not know, resource_missing, so a refused transfer is
   * testable without Stripe (issue 38, defect 1).
   */
  async transfer(request: TransferRequest): Promise<{ transferId: string }> {
    if (request.destination === SANDBOX_REFUSING_DESTINATION) {
      throw new TransferRefusedError(`The sandbox refused the transfer of payout ${request.payoutId} to its test destination ${SANDBOX_REFUSING_DESTINATION} (resource_missing).`, 'resource_missing');
    }
    const id = await this.once(`payout-${request.payoutId}`, 'tr', { mode: request.mode, kind: 'transfer', amountCents: request.amountCents, currency: request.currency, paymentId: null });
    return { transferId: id };
  }

  async records(request: ProcessorRecordsRequest): Promise<ProcessorRecord[]> {
    // A dispute's reversal is named by its dispute, as our books name it; a lost one moved nothing.
    const { rows } = await this.db.query(
      `SELECT CASE WHEN kind = 'dispute_reversal' THEN payment_id ELSE id END AS id, kind, amount_cents, currency, created_at,
              CASE WHEN kind IN ('refund', 'fee') THEN payment_id END AS payment_id
         FROM sandbox_processor_records
        WHERE mode = $1 AND kind <> 'dispute_lost' AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
        ORDER BY created_at, id`,
      [request.mode, request.from?.toISOString() ?? null, request.to?.toISOString() ?? null],
    );
    return rows.map((r) => ({
      kind: r.kind,
      id: r.id,
      amount_cents: Number(r.amount_cents),
      currency: r.currency,
      created_at: new Date(r.created_at).toISOString(),
      ...(r.payment_id ? { payment_id: r.payment_id } : {}),
    }));
  }

  /** A record made once per idempotency key: a retry answers the first one's id. */
  private async once(
    key: string,
    prefix: string,
    record: { mode: Mode; kind: 'refund' | 'transfer'; amountCents: number; currency: string; paymentId: string | null },
  ): Promise<string> {
    await this.db.query(
      `INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, payment_id, idempotency_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (idempotency_key) DO NOTHING`,
      [newId(prefix), record.mode, record.kind, record.amountCents, record.currency, record.paymentId, key],
    );
    const { rows } = await this.db.query<{ id: string }>('SELECT id FROM sandbox_processor_records WHERE idempotency_key = $1', [key]);
    return rows[0].id;
  }

  /** A card processor's price, as Stripe's standard one: bps of the amount (rounded half up) plus a fixed part. */
  private feeOn(amountCents: number): number {
    return Math.floor((amountCents * this.fee.bps + 5000) / 10000) + this.fee.fixedCents;
  }
}

/** The sandbox's test destination whose transfers are refused (resource_missing). */
export const SANDBOX_REFUSING_DESTINATION = 'acct_sandboxRefuses';

/** decisions section 3: the sandbox's test cards. */
export const SANDBOX_CARDS = { pays: '4242424242424242', declines: '4000000000000002', disputed: '4000000000000259' } as const;
