import type { Projection } from '../src/projection-runner/projection';
import { accountsProjection } from './accounts.projection';
import { apiKeysProjection } from './api-keys.projection';
import { catalogListingsProjection } from './catalog-listings.projection';
import { balanceTransactionsProjection } from './balance-transactions.projection';
import { creditsProjection } from './credits.projection';
import { disputesProjection } from './disputes.projection';
import { eventActorsProjection } from './event-actors.projection';
import { eventsPerMinuteProjection } from './events-per-minute.projection';
import { factoryJobsProjection } from './factory-jobs.projection';
import { inferencePricesProjection } from './inference-prices.projection';
import { inferenceUsageProjection } from './inference-usage.projection';
import { journalProjection } from './journal.projection';
import { keyActivationsProjection } from './key-activations.projection';
import { operatorsProjection } from './operators.projection';
import { parkedProcessorEventsProjection } from './parked-processor-events.projection';
import { payoutPausesProjection } from './payout-pauses.projection';
import { payoutsProjection } from './payouts.projection';
import { publicEventsProjection } from './public-events.projection';
import { purchasesProjection } from './purchases.projection';
import { webhookEndpointsProjection } from './webhook-endpoints.projection';

/** Every read model the service keeps, in no particular order (each has its own checkpoint). */
export const ALL_PROJECTIONS: readonly Projection[] = [
  accountsProjection,
  apiKeysProjection,
  keyActivationsProjection,
  creditsProjection,
  catalogListingsProjection,
  webhookEndpointsProjection,
  publicEventsProjection,
  balanceTransactionsProjection,
  journalProjection,
  payoutsProjection,
  payoutPausesProjection,
  purchasesProjection,
  disputesProjection,
  parkedProcessorEventsProjection,
  inferencePricesProjection,
  inferenceUsageProjection,
  factoryJobsProjection,
  eventsPerMinuteProjection,
  operatorsProjection,
  eventActorsProjection,
];
