import { ApiError } from '../platform/errors';

/** Ledger error codes (documented in docs/decisions.md, "Ledger"). None is worth retrying. */
export const LedgerErrors = {
  saleNotFound: (purchaseId: string) =>
    new ApiError(404, 'sale_not_found', `No sale of purchase "${purchaseId}" is on this ledger.`),
  alreadyRefunded: (purchaseId: string) =>
    new ApiError(400, 'already_refunded', `The sale of purchase "${purchaseId}" has already been refunded.`),
  currencyMismatch: (given: string, ledger: string) =>
    new ApiError(400, 'currency_mismatch', `This ledger is kept in "${ledger}"; a sale in "${given}" cannot be recorded on it.`),
  nothingToPay: (accountId: string, balanceCents: number) =>
    new ApiError(400, 'nothing_to_pay', `Account ${accountId} has nothing available to pay out: its balance is ${balanceCents} cents.`),
  payoutsPaused: (accountId: string) =>
    new ApiError(400, 'payouts_paused', `Payouts of account ${accountId} are paused; resume them with svc payouts resume.`),
  destinationMissing: (accountId: string, mode: string) =>
    new ApiError(400, 'payout_destination_missing', `Account ${accountId} has no payout destination in ${mode} mode; set one with svc payouts destination.`),
} as const;
