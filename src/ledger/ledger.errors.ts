import { ApiError } from '../platform/errors';

/** Ledger error codes (documented in docs/decisions.md, "Ledger"). None is worth retrying. */
export const LedgerErrors = {
  saleNotFound: (purchaseId: string) =>
    new ApiError(404, 'sale_not_found', `No sale of purchase "${purchaseId}" is on this ledger.`),
  alreadyRefunded: (purchaseId: string) =>
    new ApiError(400, 'already_refunded', `The sale of purchase "${purchaseId}" has already been refunded.`),
  disputed: (purchaseId: string) =>
    new ApiError(400, 'charge_disputed', `The sale of purchase "${purchaseId}" is disputed: nothing of it is refunded while the dispute is open or after it was lost.`),
  notDisputable: (purchaseId: string) =>
    new ApiError(400, 'invalid_request', `The sale of purchase "${purchaseId}" cannot be disputed: it is refunded or disputed already.`),
  disputeNotFound: (disputeId: string) => new ApiError(404, 'not_found', `No dispute "${disputeId}" is on this ledger.`),
  disputeClosed: (disputeId: string, outcome: string) => new ApiError(400, 'dispute_closed', `Dispute "${disputeId}" is already closed as ${outcome}.`),
  currencyMismatch: (given: string, ledger: string) =>
    new ApiError(400, 'currency_mismatch', `This ledger is kept in "${ledger}"; a sale in "${given}" cannot be recorded on it.`),
  nothingToPay: (accountId: string, balanceCents: number) =>
    new ApiError(400, 'nothing_to_pay', `Account ${accountId} has nothing available to pay out: its balance is ${balanceCents} cents.`),
  payoutsPaused: (accountId: string, pause?: { reason: string; since: string; refused: boolean } | null) =>
    new ApiError(
      400,
      'payouts_paused',
      pause?.refused
        ? `Payouts of account ${accountId} are paused since ${pause.since} (${pause.reason}): the processor refused its destination; set a destination with svc payouts destination to lift it.`
        : `Payouts of account ${accountId} are paused${pause ? ` since ${pause.since} (${pause.reason})` : ''}; resume them with svc payouts resume.`,
    ),
  destinationMissing: (accountId: string, mode: string) =>
    new ApiError(400, 'payout_destination_missing', `Account ${accountId} has no payout destination in ${mode} mode; set one with svc payouts destination.`),
} as const;
