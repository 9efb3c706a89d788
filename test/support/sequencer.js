const Sequencer = require('@jest/test-sequencer').default;

/**
 * Longest suites first, so that no worker starts a three-minute suite while the others run out
 * of work. Jest orders by the durations it cached in an earlier run, and without them (a clean
 * clone: CI's first pass) by file size, which puts short files of long suites (a kill -9 suite,
 * a property) last. These are the suites that took longest in a whole pass (2026-11-27); a suite
 * with no cached duration and not listed keeps jest's order after them.
 */
const LONGEST_FIRST = [
  'test/readme/walkthrough.e2e.spec.ts',
  'test/commerce/commerce.property.spec.ts',
  'test/ledger/money-crash.e2e.spec.ts',
  'test/ledger/ledger.property.spec.ts',
  'test/platform/hostile-input.e2e.spec.ts',
  'test/ledger/ledger-admin.e2e.spec.ts',
  'test/catalog/search.e2e.spec.ts',
  'test/payments/stripe.e2e.spec.ts',
  'test/factory/credits.e2e.spec.ts',
  'test/commerce/fulfilment-crash.e2e.spec.ts',
  'test/inspection/publish-inspection.e2e.spec.ts',
  'test/catalog/downloads.e2e.spec.ts',
  'test/webhooks/endpoint.decider.unit.spec.ts',
  'test/webhooks/public-events.projection.spec.ts',
];

class LongestFirst extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    if (ordered.every((test) => test.duration != null)) return ordered;
    const rank = (test) => {
      const i = LONGEST_FIRST.findIndex((suffix) => test.path.endsWith(suffix));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    // Array.prototype.sort is stable: jest's order is kept within each rank.
    return ordered.sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LongestFirst;
