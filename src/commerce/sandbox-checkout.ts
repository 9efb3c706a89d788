import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { ProcessorDispute } from '../payments/payment-processor';
import type { SandboxCheckout, SessionView } from '../payments/sandbox/sandbox-checkout-page';
import { CheckoutState, completedPurchaseOf, modeOfSessionId, statusOf } from './checkout.decider';
import { CheckoutStreams } from './checkout-streams';
import { CompleteCheckoutCommand } from './commands/complete-checkout';
import { RecordProcessorDisputeCommand } from './commands/dispute-purchase';

function toView(state: CheckoutState): SessionView {
  const s = state.opened;
  return {
    id: s.session_id,
    mode: s.mode,
    status: statusOf(state, new Date()),
    description: s.asset ? s.asset.title : 'Premium API key activation',
    amount_cents: s.amount_cents,
    currency: s.currency,
    success_url: s.success_url,
    cancel_url: s.cancel_url,
    refunded: state.duplicateRefunded !== null,
  };
}

/** What the sandbox's hosted page reads and does: a session by its id, and its payment. */
@Injectable()
export class SandboxCheckoutService implements SandboxCheckout {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly commands: CommandBus,
  ) {}

  async view(sessionId: string): Promise<SessionView | undefined> {
    const mode = modeOfSessionId(sessionId);
    const state = mode && (await this.streams.load(mode, sessionId));
    return state ? toView(state) : undefined;
  }

  async pay(sessionId: string, paymentReference: string): Promise<SessionView> {
    const mode = modeOfSessionId(sessionId)!;
    return toView(await this.commands.execute(new CompleteCheckoutCommand(mode, sessionId, paymentReference, true)));
  }

  /** Only a purchase is disputed: a key activation or a duplicate payment (refunded at once) is left alone. */
  async dispute(sessionId: string, open: () => Promise<ProcessorDispute>): Promise<void> {
    const mode = modeOfSessionId(sessionId)!;
    const state = await this.streams.load(mode, sessionId);
    const purchase = state && completedPurchaseOf(state);
    if (!purchase) return;
    await this.commands.execute(new RecordProcessorDisputeCommand(mode, purchase.payment_reference, await open()));
  }
}
