import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { LedgerReconciliation } from '../../ledger/reconciliation';
import { ApiError, Errors } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import { CheckoutErrors } from '../checkout.decider';
import { CheckoutStreams } from '../checkout-streams';
import type { Purchase } from '../events';
import { Fulfilment } from '../fulfilment';
import { recordPurchaseFact } from '../purchase-facts';
import { PurchaseLocator } from './refund-purchase';

/** What `svc ledger adopt` booked. */
export interface Adoption {
  object: 'adoption';
  mode: Mode;
  kind: 'refund' | 'fee';
  processor_id: string;
  payment_reference: string;
  amount_cents: number;
  currency: string;
  actor: string;
  reason: string;
  /** The purchase as it stands after it (a refund shows in its amount_refunded_cents). */
  purchase: Purchase;
}

/** Kinds the books can miss and how else they get booked (issue 38, defect 5). */
const NOT_ADOPTABLE: Record<string, string> = {
  charge: 'a payment with no sale is a checkout whose confirmation was not recorded: deliver the processor\'s confirmation again (its webhook) or confirm the session',
  transfer: 'a transfer with no payout settled is a payout in flight: svc payouts run sends it again under its payout id and books it',
  dispute: 'a dispute is booked from the processor\'s dispute report (its webhook; svc ledger parked lists the unmatched ones)',
  dispute_reversal: 'a won dispute is booked by closing it (svc disputes close, or the processor\'s report)',
};

/**
 * `svc ledger adopt <processor id> --mode M --reason TEXT`: books a refund or a fee the
 * processor has and the books do not (as `svc ledger reconcile` lists it, missing_in_ledger)
 * on its payment's session stream: a ProcessorMovementAdopted (actor, reason) together with
 * the event that books it, as the processor's own report would, so the seller's ledger, the
 * journal and the purchase follow by the usual path. Booked already: 409 already_booked;
 * unknown to the processor: 404; nothing is appended for either. Twice: the second finds it
 * booked (and the session stream decides once, racing or not).
 */
export class AdoptMovementCommand extends Command<Adoption> {
  constructor(
    readonly mode: Mode,
    readonly processorId: string,
    readonly reason: string,
    /** The operator; today the one ADMIN_TOKEN: `admin`. */
    readonly actor: string,
  ) {
    super();
  }
}

@CommandHandler(AdoptMovementCommand)
export class AdoptMovementHandler implements ICommandHandler<AdoptMovementCommand> {
  constructor(
    private readonly reconciliation: LedgerReconciliation,
    private readonly locator: PurchaseLocator,
    private readonly streams: CheckoutStreams,
    private readonly fulfilment: Fulfilment,
  ) {}

  async execute({ mode, processorId, reason, actor }: AdoptMovementCommand): Promise<Adoption> {
    const found = await this.reconciliation.movement(mode, processorId);
    if (found.standing === 'unknown') {
      throw new ApiError(404, 'processor_record_not_found', `The ${mode} processor has no movement "${processorId}"; svc ledger reconcile --mode ${mode} lists what is missing in the ledger.`);
    }
    if (found.standing === 'booked') {
      throw CheckoutErrors.alreadyBooked(processorId, `${found.item.kind} of ${found.item.ledger_cents} cents, events ${found.item.event_ids.join(', ')}`);
    }
    const { record } = found;
    if (record.kind !== 'refund' && record.kind !== 'fee') {
      throw new ApiError(400, 'not_adoptable', `The processor's ${record.kind} ${processorId} is not booked by adoption: ${NOT_ADOPTABLE[record.kind]}.`);
    }
    if (!record.payment_id) {
      throw new ApiError(400, 'not_adoptable', `The processor does not say which payment its ${record.kind} ${processorId} belongs to; it cannot be booked on a purchase.`);
    }
    const located = await this.locator.byPayment(mode, record.payment_id);
    if (!located) {
      throw new ApiError(400, 'not_adoptable', `The processor's ${record.kind} ${processorId} is of payment ${record.payment_id}, which is none of our purchases (a duplicate payment or another use of the processor account).`);
    }
    const purchase = await recordPurchaseFact(this.streams, this.fulfilment, located, {
      type: 'AdoptMovement',
      kind: record.kind,
      processor_id: processorId,
      amount_cents: record.amount_cents,
      actor,
      reason,
    });
    return { object: 'adoption', mode, kind: record.kind, processor_id: processorId, payment_reference: record.payment_id, amount_cents: record.amount_cents, currency: record.currency, actor, reason, purchase };
  }
}

/** An adoption's reason: what an auditor reads beside it, so required and bounded. */
export function adoptionReason(reason: unknown): string {
  if (typeof reason !== 'string' || !reason.trim() || reason.length > 500) throw Errors.validationFailed('Invalid field "reason": required, 1-500 characters: why the movement is booked by hand.');
  return reason.trim();
}
