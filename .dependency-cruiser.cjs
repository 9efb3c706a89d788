/**
 * The dependency rule (docs/architecture.md), kept by CI (`npm run lint:deps`):
 * platform/ is the floor; the infrastructure (config, database, event store, storage,
 * projection runner) knows no bounded context; payments/ is a port that knows no context;
 * no context reads projections/ (the read models' code), only the composition root wires them;
 * only the operator CLI uses the TypeScript SDK's sources (clients/typescript/src), and the SDK
 * imports nothing of the server; no import circles; no file nobody imports.
 */
const CONTEXTS = '^src/(accounts|admin|catalog|commerce|console|factory|health|inference|ledger|metrics|openapi|operators|webhooks|cli)/';

module.exports = {
  forbidden: [
    {
      name: 'platform-is-the-floor',
      comment: 'platform/ holds what every layer uses (errors, ids, modes, streams, HTTP plumbing): it imports only itself and config/.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^(src|projections)/', pathNot: '^src/(platform|config)/' },
    },
    {
      name: 'infrastructure-knows-no-context',
      comment: 'The event store, database, storage, projection runner and file inspection serve every context and know none of them.',
      severity: 'error',
      from: { path: '^src/(config|database|event-store|storage|projection-runner|inspection)/' },
      to: { path: `${CONTEXTS}|^src/payments/|^projections/` },
    },
    {
      name: 'payments-is-a-port',
      comment: 'payments/ is the PaymentProcessor port and its adapters; the contexts use it, never the reverse (the Stripe webhook is commerce\'s).',
      severity: 'error',
      from: { path: '^src/payments/' },
      to: { path: `${CONTEXTS}|^projections/` },
    },
    {
      name: 'contexts-read-no-projection-code',
      comment: 'A read model is read through its context\'s queries, named by its context\'s constant; only the composition root registers projections/.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/infrastructure\\.module\\.ts$' },
      to: { path: '^projections/' },
    },
    {
      name: 'accounts-below-commerce',
      comment: 'Commerce activates keys when their fee is paid, so accounts asks for a checkout through its ACTIVATION_CHECKOUT port (bound in app.module.ts), never by importing commerce (issue 43).',
      severity: 'error',
      from: { path: '^src/accounts/' },
      to: { path: '^src/commerce/' },
    },
    {
      name: 'admin-is-on-top',
      comment: 'The operator context composes the others; no other context imports it. Parameters every operator endpoint shares live where they belong (platform/mode.ts, accounts/account-param.ts) (issue 43).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(admin/|app\\.module\\.ts$|app\\.ts$)' },
      to: { path: '^src/admin/' },
    },
    {
      name: 'idempotency-below-webhooks',
      comment: 'Kept answers are sealed with platform/secret-box.ts, which the webhooks context also uses; the request bookkeeping imports no webhook code (issue 43).',
      severity: 'error',
      from: { path: '^src/idempotency/' },
      to: { path: '^src/webhooks/' },
    },
    {
      name: 'only-the-cli-uses-the-sdk',
      comment: "The operator CLI (src/cli) uploads with the TypeScript SDK's uploader and is typed by the SDK's generated types (docs/decisions/0075); the service itself does not import the SDK.",
      severity: 'error',
      from: { path: '^(src|projections)/', pathNot: '^src/cli/' },
      to: { path: '^clients/' },
    },
    {
      name: 'the-sdk-stands-alone',
      comment: 'clients/typescript is a package of its own (npm pack): it imports nothing from the server.',
      severity: 'error',
      from: { path: '^clients/' },
      to: { path: '^(src|projections)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      comment: 'A file nobody imports is dead code: entry points aside, and verify-signature.ts, the receiver helper docs/webhooks.md gives webhook consumers to copy.',
      severity: 'error',
      from: { orphan: true, pathNot: ['^src/main\\.ts$', '^src/cli/main\\.ts$', '^src/openapi/write-document\\.ts$', '^src/webhooks/verify-signature\\.ts$', '\\.d\\.ts$'] },
      to: {},
    },
  ],
  options: {
    includeOnly: '^(src|projections|clients/typescript/src)/',
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  },
};
