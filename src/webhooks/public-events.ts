import type { RecordedEvent } from '../event-store/event-store';
import { isMode, Mode } from '../platform/mode';
import type { WebhookEndpointTestRequested } from './events';

/** The public event types of spec part 6; an endpoint subscribes to a subset. */
export const PUBLIC_EVENT_TYPES = [
  'listing.purchased',
  'listing.published',
  'listing.unpublished',
  'listing.validation_failed',
  'asset.downloaded',
  'factory.job.completed',
  'factory.job.published',
  'payout.paid',
  'payout.failed',
  'purchase.refunded',
] as const;

export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

export function isPublicEventType(value: string): value is PublicEventType {
  return (PUBLIC_EVENT_TYPES as readonly string[]).includes(value);
}

/** What one domain event becomes on the wire, and whose endpoints receive it. */
export interface PublicEvent {
  type: PublicEventType;
  accountId: string;
  mode: Mode;
  data: Record<string, unknown>;
}

type Mapper = (d: any) => Omit<PublicEvent, 'mode'>;

/**
 * The one table from domain events (emitted by catalog, commerce and factory) to public
 * events (decisions section 6). Purchases and downloads go to the seller.
 */
const MAPPING: Record<string, Mapper> = {
  ListingPublished: (d) => ({ type: 'listing.published', accountId: d.account_id, data: { listing: d.listing } }),
  ListingUnpublished: (d) => ({ type: 'listing.unpublished', accountId: d.account_id, data: { listing: d.listing } }),
  // Only a failure the background inspection decided (issue 40): a publish the request refused already answered 400.
  ListingValidationFailed: (d) => ({
    type: 'listing.validation_failed',
    accountId: d.background ? d.account_id : undefined,
    data: { listing: d.listing, validation_errors: d.errors },
  }),
  AssetDownloaded: (d) => ({
    type: 'asset.downloaded',
    accountId: d.account_id,
    data: { asset: d.asset, buyer_account_id: d.buyer_account_id },
  }),
  PurchaseCompleted: (d) => ({
    type: 'listing.purchased',
    accountId: d.seller_account_id,
    data: { purchase: d.purchase, listing: d.listing },
  }),
  PayoutPaid: (d) => ({ type: 'payout.paid', accountId: d.account_id, data: { payout: d.payout } }),
  // Failures recorded before they carried the payout have no webhook (the mapper needs its amount).
  PayoutFailed: (d) => ({ type: 'payout.failed', accountId: d.payout ? d.account_id : undefined, data: { payout: d.payout } }),
  // To the seller, whose sale it takes back; refunds recorded before they carried the purchase have none.
  PurchaseRefunded: (d) => ({ type: 'purchase.refunded', accountId: d.purchase ? d.seller_account_id : undefined, data: { purchase: d.purchase } }),
  GenerationJobCompleted: (d) => ({ type: 'factory.job.completed', accountId: d.account_id, data: { job: d.job } }),
  GenerationJobPublished: (d) => ({ type: 'factory.job.published', accountId: d.account_id, data: { job: d.job } }),
};

/** The domain event types that can become public events. */
export const DOMAIN_TYPES_WITH_PUBLIC_EVENTS: readonly string[] = Object.keys(MAPPING);

/** The public event for a domain event, or undefined when it has none (or lacks an owner or mode). */
export function toPublicEvent(event: RecordedEvent): PublicEvent | undefined {
  const map = MAPPING[event.type];
  if (!map || !isMode(event.data?.mode)) return undefined;
  const mapped = map(event.data);
  if (typeof mapped.accountId !== 'string') return undefined;
  return { ...mapped, mode: event.data.mode };
}

/** evt_ and the uuid's hex: the public id of the event a delivery carries. */
export const publicEventId = (uuid: string) => `evt_${uuid.replace(/-/g, '')}`;

/** The envelope of spec part 2; the id derives from the domain event so redeliveries share it. */
export function envelope(event: RecordedEvent, mapped: Pick<PublicEvent, 'data'> & { type: string }, id = event.id): string {
  return JSON.stringify({
    id: publicEventId(id),
    type: mapped.type,
    created: Math.floor(event.createdAt.getTime() / 1000),
    data: mapped.data,
  });
}

/**
 * Sent only on request (POST /v1/webhook_endpoints/{id}/test), to that endpoint whatever
 * its events filter; not one of PUBLIC_EVENT_TYPES, so no endpoint subscribes to it.
 */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The envelope of a WebhookEndpointTestRequested, under the event id its request answered with. */
export function testEnvelope(event: RecordedEvent): string {
  const { endpoint_id, event_id } = event.data as WebhookEndpointTestRequested;
  return envelope(event, { type: TEST_EVENT_TYPE, data: { endpoint: { id: endpoint_id } } }, event_id);
}
