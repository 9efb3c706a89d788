/**
 * Preloaded into the service (`node -r bench/without-chain.js dist/src/main.js`) by
 * bench/journal.js's digest-chain row: the journal projection without its hash chain. chainOf
 * gives no entries, so no digest is computed and no journal_chain row inserted; the batch's
 * read of the chain head (one statement, shared with the last close's lookup) stays. The
 * service has no switch for this: the chain is part of the books, so only the bench takes it off.
 */
const chain = require('../dist/src/ledger/journal-chain');

chain.chainOf = () => [];
