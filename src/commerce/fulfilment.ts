import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ActivateApiKeyCommand } from '../accounts/commands/activate-api-key';
import { Position, RecordedEvent } from '../event-store/event-store';
import { RecordDisputeCommand, RecordDisputeOutcomeCommand } from '../ledger/commands/record-dispute';
import { RecordRefundCommand } from '../ledger/commands/record-refund';
import { RecordSaleCommand } from '../ledger/commands/record-sale';
import { ApiError } from '../platform/errors';
import { asConsequenceOf } from '../platform/request-context';
import { EventWriter } from '../projection-runner/event-writer';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { CheckoutStreams } from './checkout-streams';
import { EntitlementStreams } from './entitlement-streams';
import { ProcessorFees } from './processor-fees';
import type { KeyActivationPaid, PurchaseCompleted, PurchaseDisputeClosed, PurchaseDisputed, PurchasePartiallyRefunded, PurchaseRefunded } from './events';

/** Its row in projection_checkpoints; like the webhook fan-out it is never rebuilt. */
export const FULFILMENT_CHECKPOINT = 'subscriber:fulfilment';

const BATCH_SIZE = 100;
/** The completions whose consequence this subscriber records (see fulfil). */
const FULFILLED = ['PurchaseCompleted', 'PurchasePartiallyRefunded', 'PurchaseRefunded', 'PurchaseDisputed', 'PurchaseDisputeClosed', 'KeyActivationPaid'];
/** How long a payment confirmation waits for its fulfilment before answering anyway. */
const WAIT_MS = 10_000;

/**
 * The second half of fulfilment, a persistent subscriber. A completed checkout is one
 * event on its session's stream (PurchaseCompleted, KeyActivationPaid, PurchaseRefunded);
 * this subscriber turns each into its consequence on another stream: the sale or refund
 * on the seller's ledger (and, for a refund, the end of the buyer's entitlement), or the
 * key's activation. Each consequence is idempotent
 * (a ledger records one sale per purchase id), and the checkpoint moves only after they
 * are recorded, so a crash between the two halves replays the consequence and never
 * loses or doubles it.
 */
@Injectable()
export class Fulfilment {
  constructor(
    private readonly commands: CommandBus,
    private readonly projections: ProjectionRunner,
    private readonly checkouts: CheckoutStreams,
    private readonly entitlements: EntitlementStreams,
    private readonly writer: EventWriter,
    private readonly fees: ProcessorFees,
  ) {}

  start(): Promise<void> {
    return this.projections.subscribe({
      name: FULFILMENT_CHECKPOINT,
      batchSize: BATCH_SIZE,
      // Money: a payment whose sale cannot be recorded stops fulfilment, loudly; it is never skipped.
      whenFailing: 'stop',
      types: FULFILLED,
      apply: async () => undefined,
      // Outside the checkpoint's transaction: each consequence is an append of its own. The
      // batch waits once for its consequences' read models (a payer waiting on this
      // checkpoint then reads the sale), not once per event.
      before: (events) =>
        this.writer.gatheringWaits(async () => {
          // Each consequence carries its cause's actor, request id and reason (docs/events.md, metadata).
          for (const event of events) await asConsequenceOf(event, () => this.fulfil(event));
        }),
    });
  }

  stop(): Promise<void> {
    return this.projections.unsubscribe(FULFILMENT_CHECKPOINT);
  }

  /**
   * Read-your-writes for whoever recorded (or decided on) `position`: true once the
   * completions up to it have their consequences recorded and are in the read models that
   * show them (a purchase in GET /v1/purchases).
   */
  waitFor(position: Position): Promise<boolean> {
    const projections = [FULFILMENT_CHECKPOINT, ...this.projections.handling(FULFILLED)];
    return this.projections.waitFor(position, { projections, timeoutMs: WAIT_MS });
  }

  private async fulfil(event: RecordedEvent): Promise<void> {
    switch (event.type) {
      case 'PurchaseCompleted': {
        const e = event.data as PurchaseCompleted;
        await this.commands.execute(
          new RecordSaleCommand(e.seller_account_id, e.mode, {
            purchase_id: e.purchase_id,
            asset: e.purchase.asset,
            amount_cents: e.purchase.amount_cents,
            currency: e.purchase.currency,
            payment_reference: e.payment_reference,
          }),
        );
        // The processor's fee, whether or not the paying request lived to book it (issue 38, defect 2).
        await this.fees.record(e.mode, e.session_id);
        return;
      }
      case 'PurchasePartiallyRefunded': {
        // Its part of the sale, fee in proportion; the ledger records each processor refund once.
        const e = event.data as PurchasePartiallyRefunded;
        await this.commands.execute(new RecordRefundCommand(e.seller_account_id, e.mode, e.purchase_id, e.processor_refund_id, e.amount_cents));
        return;
      }
      case 'PurchaseRefunded': {
        const e = event.data as PurchaseRefunded;
        try {
          await this.commands.execute(new RecordRefundCommand(e.seller_account_id, e.mode, e.purchase_id, e.processor_refund_id));
        } catch (error) {
          // Replayed after a crash: the debit is already on the ledger.
          if (!(error instanceof ApiError && error.code === 'already_refunded')) throw error;
        }
        // The buyer may buy the asset again.
        const session = await this.checkouts.load(e.mode, e.session_id);
        await this.entitlements.end(session!.opened, e.purchase_id, e.refunded_at);
        return;
      }
      case 'PurchaseDisputed': {
        // The sale's net of the disputed amount is withheld from the seller until it closes.
        const e = event.data as PurchaseDisputed;
        await this.commands.execute(
          new RecordDisputeCommand(e.seller_account_id, e.mode, e.purchase_id, e.dispute_id, e.amount_cents, e.dispute_fee_cents, e.reason),
        );
        return;
      }
      case 'PurchaseDisputeClosed': {
        const e = event.data as PurchaseDisputeClosed;
        await this.commands.execute(new RecordDisputeOutcomeCommand(e.seller_account_id, e.mode, e.purchase_id, e.dispute_id, e.outcome));
        if (e.outcome === 'lost') {
          // The buyer has the money back: the download is revoked (and the asset may be bought again).
          const session = await this.checkouts.load(e.mode, e.session_id);
          await this.entitlements.end(session!.opened, e.purchase_id, e.closed_at);
        }
        return;
      }
      case 'KeyActivationPaid': {
        const e = event.data as KeyActivationPaid;
        await this.commands.execute(new ActivateApiKeyCommand(e.mode, e.key_id, e.session_id));
        await this.fees.record(e.mode, e.session_id);
        return;
      }
    }
  }
}
