import { Mode } from './mode';

/**
 * Every stream name in one place. A name is "<category>-<id>"; a category that holds
 * mode-specific facts takes the mode first ("apikey-live-key_..."), so a stream can never
 * hold facts of both modes.
 */
export const Streams = {
  account: (accountId: string) => `account-${accountId}`,
  /** Claims an account slug; appended with no_stream so a slug is taken once. */
  accountSlug: (slug: string) => `accountslug-${slug}`,
  apiKey: (mode: Mode, keyId: string) => `apikey-${mode}-${keyId}`,
  credits: (mode: Mode, accountId: string) => `credits-${mode}-${accountId}`,
  /** One model or dataset listing: its draft, edits, publication and downloads. */
  listing: (mode: Mode, listingId: string) => `listing-${mode}-${listingId}`,
  /** Claims a listing slug within a mode; appended with no_stream so a slug is taken once. */
  listingSlug: (mode: Mode, slug: string) => `listingslug-${mode}-${slug}`,
  /** Counts a buyer's download of a dataset once per UTC day (YYYY-MM-DD); appended with no_stream. */
  datasetDownloadDay: (mode: Mode, listingId: string, buyerAccountId: string, day: string) => `datasetdownload-${mode}-${listingId}-${buyerAccountId}-${day}`,
  webhookEndpoint: (mode: Mode, endpointId: string) => `webhookendpoint-${mode}-${endpointId}`,
  /** A creator's money in one mode: the consistency boundary for sales, refunds and payouts. */
  ledger: (mode: Mode, accountId: string) => `ledger-${mode}-${accountId}`,
  /** A mode's books as a whole: its period closes (PeriodClosed), appended with the expected revision, so closes take turns. */
  books: (mode: Mode) => `books-${mode}`,
  /** One adjusting entry between platform accounts (svc ledger adjust); appended with no_stream. */
  manualEntry: (mode: Mode, entryId: string) => `manualentry-${mode}-${entryId}`,
  /** One checkout session: its opening, its completion and a refund; the fulfilment boundary. */
  checkout: (mode: Mode, sessionId: string) => `checkout-${mode}-${sessionId}`,
  /** A buyer's entitlement to one asset: its open checkout and the purchase that holds it; one purchase per buyer, asset and mode. */
  entitlement: (mode: Mode, buyerAccountId: string, assetId: string) => `entitlement-${mode}-${buyerAccountId}-${assetId}`,
  /**
   * A processor event we could not apply (a dispute or partial refund of a payment that is none
   * of our purchases), parked for an operator; appended with no_stream, so a redelivery parks nothing new.
   */
  parkedProcessorEvent: (mode: Mode, processorEventId: string) => `parkedprocessorevent-${mode}-${processorEventId}`,
  /** One generation job: every move between its stages (decisions section 7). */
  job: (mode: Mode, jobId: string) => `job-${mode}-${jobId}`,
  /** The price history of one inference model; prices hold in both modes. */
  inferencePrice: (model: string) => `inferenceprice-${model}`,
  /**
   * One group commit of metered inference calls of one mode (UsageMeter): calls carry no
   * invariant between them, so each flush is its own stream, appended with no_stream.
   */
  inferenceUsage: (mode: Mode, batchId: string) => `inferenceusage-${mode}-${batchId}`,
  /** One named operator of the operator API and the console: its tokens and their revocations (issue 38). */
  operator: (name: string) => `operator-${name}`,
} as const;
