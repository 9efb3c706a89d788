import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DATABASE, Database } from '../../database/database';
import { Errors } from '../../platform/errors';
import { DeliveryLogEntry, toEntry } from '../delivery-log';
import { EndpointStreams } from '../endpoint-streams';
import type { EndpointOwner } from '../endpoint.decider';

export class RetryWebhookDeliveryCommand extends Command<DeliveryLogEntry> {
  constructor(
    readonly deliveryId: string,
    /** The public API's caller and the endpoint in the path; absent for the operator, who acts across accounts. */
    readonly within?: { owner: EndpointOwner; endpointId: string },
  ) {
    super();
  }
}

/**
 * Another attempt now: a delivery that succeeded or failed goes back to pending, due at
 * once, its attempts and their log kept (the worker counts it like any attempt, so a
 * delivery that had used up the schedule gets exactly this one); a pending one waiting for
 * its next attempt (hours away, late in the schedule) is due at once. A delivery whose
 * attempt is under way (a worker's lease on it runs): 409. Deliveries are the worker's
 * operational state, not events, so this is a guarded update, as the worker's own are.
 */
@CommandHandler(RetryWebhookDeliveryCommand)
export class RetryWebhookDeliveryHandler implements ICommandHandler<RetryWebhookDeliveryCommand> {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    private readonly endpoints: EndpointStreams,
  ) {}

  async execute({ deliveryId, within }: RetryWebhookDeliveryCommand): Promise<DeliveryLogEntry> {
    const { owner, endpointId } = within ?? (await this.locate(deliveryId));
    const endpoint = await this.endpoints.find(owner, endpointId);
    if (!endpoint) throw Errors.notFound('webhook endpoint');
    if (!endpoint.enabled) {
      // A paused endpoint receives nothing (spec part 6): the retry would wait unseen.
      if (!(await this.statusOf(deliveryId, endpointId))) throw Errors.notFound('webhook delivery');
      throw Errors.invalidRequest('The webhook endpoint is disabled; enable it to retry its deliveries.');
    }
    const { rows } = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now()
        WHERE id = $1 AND endpoint_id = $2 AND (leased_until IS NULL OR leased_until < now())
        RETURNING *`,
      [deliveryId, endpointId],
    );
    if (rows.length) return toEntry(rows[0]);
    if (await this.statusOf(deliveryId, endpointId)) throw Errors.conflict('The delivery is pending with an attempt under way; retry it once that attempt has answered.');
    throw Errors.notFound('webhook delivery');
  }

  private async statusOf(deliveryId: string, endpointId: string): Promise<string | undefined> {
    const { rows } = await this.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [deliveryId, endpointId]);
    return rows[0]?.status;
  }

  private async locate(deliveryId: string): Promise<{ owner: EndpointOwner; endpointId: string }> {
    const { rows } = await this.db.query<{ endpoint_id: string; account_id: string; mode: EndpointOwner['mode'] }>(
      'SELECT endpoint_id, account_id, mode FROM webhook_deliveries WHERE id = $1',
      [deliveryId],
    );
    if (!rows.length) throw Errors.notFound('webhook delivery');
    return { owner: { accountId: rows[0].account_id, mode: rows[0].mode }, endpointId: rows[0].endpoint_id };
  }
}
