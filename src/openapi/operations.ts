import { RESPONSE_EXAMPLES } from './examples';
import { object, page, ref } from './schemas';

/**
 * What the controllers cannot say about themselves: a summary, the query parameters the
 * handlers parse by hand, the success body's schema and any error status beyond the
 * generic ones (document.ts derives 400/401/403/404 from the route itself). Keyed by
 * "METHOD /path" as it appears in the document; a key that matches no route fails the
 * document build, so this table cannot go stale silently.
 */
export interface OperationNotes {
  summary: string;
  description?: string;
  query?: QueryParameter[];
  /** The success body's schema. */
  response?: Record<string, unknown>;
  /** What the answer's server-sent events are, for operations that can stream. */
  events?: string;
  /** For handlers that check their scope themselves instead of with @RequireScope. */
  scopes?: string[];
  /** For handlers that set their status on the reply themselves. */
  status?: string;
  /** The body schema, for handlers that parse their body themselves. */
  body?: Record<string, unknown>;
  /** An example request body; without one, the body DTO's in examples.ts. */
  example?: Record<string, unknown>;
  /** An example success body, for answers examples.ts cannot compose (a page with extra fields). */
  responseExample?: Record<string, unknown>;
  /** The body may be left out: every field of its DTO is optional. */
  bodyOptional?: boolean;
  /** Extra error statuses this operation answers, with why. */
  errors?: Record<number, string>;
}

export interface QueryParameter {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

const text = (name: string, description: string): QueryParameter => ({ name, description, schema: { type: 'string', maxLength: 200 } });
const flag = (name: string, description: string): QueryParameter => ({ name, description, schema: { type: 'string', enum: ['true', 'false'] } });

/** Spec part 8: limit 1-100 (default 20); the cursor is the last item's id of the previous page. */
const PAGE: QueryParameter[] = [
  { name: 'limit', description: 'Items per page, 1-100 (default 20).', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  { name: 'cursor', description: 'next_cursor of the previous page.', schema: { type: 'string' } },
];

/** Stripe's creation-time filters (src/platform/created-range.ts), on every list with a creation time. */
const CREATED: QueryParameter[] = (
  [
    ['gt', 'after'],
    ['gte', 'at or after'],
    ['lt', 'before'],
    ['lte', 'at or before'],
  ] as const
).map(([bound, words]) => ({
  name: `created[${bound}]`,
  description: `Only items created ${words} this instant: unix seconds (a whole second), or ISO 8601 with an offset (Z or +02:00; without one: 400).`,
  schema: { type: 'string', examples: ['1767225600', '2026-01-01T00:00:00Z'] },
}));

/** GET /v1/models and /v1/datasets (src/catalog/list-params.ts); facets are additive filters. */
const SEARCH: QueryParameter[] = [
  text('q', 'Full-text search over title, description and tags.'),
  text('type', 'Asset type, e.g. onnx-model.'),
  text('category', 'Category slug, e.g. manipulation.'),
  text('framework', 'One framework the asset lists.'),
  text('hardware', 'One hardware target the asset lists.'),
  text('sensor', 'One sensor the asset lists.'),
  flag('ros_compatible', 'Only ROS-compatible assets (or only others).'),
  flag('jetson_compatible', 'Only Jetson-compatible assets (or only others).'),
  flag('isaac_sim_compatible', 'Only Isaac Sim-compatible assets (or only others).'),
  ...CREATED,
  ...PAGE,
];

const BAD_FILE = 'validation_failed (names the field); invalid_storage_path: outside the caller’s own user/<account_id>/ prefix; file_not_found: not in storage yet.';
const PRICE = 'validation_failed (names the field); price_too_low: a paid price under 100 cents.';
const PURCHASE_REQUIRED = 'purchase_required: a paid asset the caller has not bought (the price is attached).';

/** POST /v1/chat/completions, and the same gateway at the OpenAI base URL (issue 42). */
const CHAT_COMPLETIONS: OperationNotes = {
  summary: 'OpenAI-compatible chat completion',
  // assertMayRunInference (src/inference/chat-completions.ts) checks the scope and the premium tier.
  scopes: ['inference:run'],
  status: '200',
  description: 'Needs a premium key. The body and answer are OpenAI’s; `stream: true` answers server-sent events.',
  // OpenAI's shapes, referenced rather than copied (decisions: OpenAPI).
  body: ref('ChatCompletionRequest'),
  response: ref('ChatCompletion'),
  events: 'With `stream: true`: `data:` lines of chat.completion.chunk objects, then `data: [DONE]`.',
  errors: {
    400: 'validation_failed (names the field); invalid_request: the engine refused the request; unsupported_parameter (test keys): a field the sandbox cannot honour, named in `param`.',
    402: 'payment_required: the premium key is not activated yet.',
    404: 'model_not_found: no such inference model (GET /v1/inference/models lists them).',
    503: 'service_unavailable: inference is temporarily unavailable; retry with backoff.',
  },
};

export const OPERATIONS: Record<string, OperationNotes> = {
  'GET /v1/me': { summary: 'The account behind the key, and the key’s mode and scopes', response: ref('Account') },

  'GET /v1/models': { summary: 'Search published models', query: SEARCH, response: page(ref('Asset')) },
  'POST /v1/models': {
    summary: 'Publish a model from an uploaded file',
    example: {
      title: 'Grasp Policy',
      type: 'rl-policy',
      license: 'MIT',
      price_cents: 2500,
      storage_path: 'user/acct_123/1767225600-policy.onnx',
      file_name: 'policy.onnx',
      file_size: 1048576,
      file_extension: '.onnx',
    },
    description: 'The file must be in storage under the caller’s own prefix (see POST /v1/uploads).',
    response: ref('Listing'),
    errors: { 400: `${BAD_FILE} price_too_low: a paid price under 100 cents.` },
  },
  'GET /v1/models/{idOrSlug}': { summary: 'One published model', response: ref('Asset') },
  'PATCH /v1/models/{idOrSlug}': { summary: 'Change an own model’s price, version or metadata', response: ref('Listing'), errors: { 400: PRICE } },
  'DELETE /v1/models/{idOrSlug}': { summary: 'Unpublish an own model', response: ref('Listing') },
  'POST /v1/models/{idOrSlug}/download': {
    summary: 'A signed download URL for a model or dataset file',
    response: ref('Download'),
    errors: { 402: PURCHASE_REQUIRED },
  },

  'GET /v1/uploads': { summary: 'Upload limits: the largest file and the allowed extensions', response: ref('UploadLimits') },
  'POST /v1/uploads': {
    summary: 'A signed URL to upload one file to, and part URLs for a large one',
    description: 'Above the multipart threshold (100 MiB by default) the grant also carries `multipart`: PUT each part to its URL, then POST /v1/uploads/complete.',
    response: ref('UploadGrant'),
    example: { file_name: 'policy.onnx', file_size: 1048576 },
  },
  'POST /v1/uploads/parts': {
    summary: 'Part URLs of a multipart upload, 100 at most: part_numbers, or the first 100',
    description: 'A grant carries the first 100 part URLs; this signs the rest, and fresh ones after they expire.',
    response: ref('MultipartUpload'),
    errors: { 400: BAD_FILE },
  },
  'POST /v1/uploads/complete': {
    summary: 'Complete a multipart upload with its parts’ ETags',
    description: 'Every part once, in order. A part missing or not matching its ETag: 400 naming it, and nothing is stored.',
    response: ref('UploadCompleted'),
    errors: { 400: BAD_FILE },
  },
  'POST /v1/uploads/abort': { summary: 'Abort a multipart upload and drop its parts', response: ref('UploadAborted'), errors: { 400: BAD_FILE } },
  'PUT /v1/uploads': { summary: 'Whether an upload landed, and its size', response: ref('UploadCheck'), errors: { 400: BAD_FILE } },

  'GET /v1/datasets': { summary: 'Search published datasets', query: SEARCH, response: page(ref('Asset')) },
  'POST /v1/datasets': { summary: 'Create a dataset draft (its data arrives as shards)', response: ref('Listing'), errors: { 400: PRICE } },
  'GET /v1/datasets/{idOrSlug}': { summary: 'One published dataset', response: ref('Asset') },
  'PATCH /v1/datasets/{idOrSlug}': { summary: 'Change an own dataset’s price, version or metadata', response: ref('Listing'), errors: { 400: PRICE } },
  'DELETE /v1/datasets/{idOrSlug}': { summary: 'Unpublish an own dataset', response: ref('Listing') },
  'POST /v1/datasets/{idOrSlug}/publish': {
    summary: 'Publish an own dataset, fixing its shards',
    response: ref('Listing'),
    errors: { 400: `${BAD_FILE} (a dataset needs a shard first)`, 409: 'conflict: a shard changed while it was being published; retry.' },
  },
  'GET /v1/datasets/{idOrSlug}/preview': {
    summary: 'A dataset before purchase: layout, summary, files and a sample',
    description:
      'Any key that can read the published dataset, bought or not (the owner also before publishing; 404 for anyone else and across modes). Built from what the publish inspected and ' +
      'sampled, never from storage, and never with a download URL. The sample is at most 20 rows and 256 KiB; it holds no video frames.',
    query: [
      { name: 'limit', description: 'Files on this page: 1 to 1000, 100 by default.', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
      { name: 'after', description: 'Files whose name sorts after this one (the last name of the previous page).', schema: { type: 'string', maxLength: 512 } },
      { name: 'prefix', description: 'Only files whose name starts with this (e.g. data/).', schema: { type: 'string', maxLength: 512 } },
    ],
    response: ref('DatasetPreview'),
  },
  'POST /v1/datasets/{idOrSlug}/shards': { summary: 'A signed URL to upload one shard to', response: ref('ShardGrant') },
  'GET /v1/datasets/{idOrSlug}/shards': {
    summary: 'The shards that landed in storage',
    description: 'Names are relative paths (data/chunk-000/episode_000000.parquet); every shard shows its sha256 (null while a large draft shard is still being hashed).',
    query: [{ name: 'prefix', description: 'Only shards whose name starts with this (e.g. data/).', schema: { type: 'string', maxLength: 512 } }],
    response: ref('ShardList'),
  },
  'GET /v1/datasets/{idOrSlug}/shards/{path}': {
    summary: 'A signed download URL for one shard',
    description: 'The shard name is the rest of the path, folders included (shards/meta/info.json), or the same with "/" encoded as %2F.',
    response: ref('ShardDownload'),
    errors: { 402: PURCHASE_REQUIRED },
  },

  'GET /v1/listings': {
    summary: 'The caller’s own models and datasets, in every state',
    query: [{ name: 'status', description: 'Only listings in this state.', schema: { type: 'string', enum: ['draft', 'published', 'unpublished'] } }, ...CREATED, ...PAGE],
    response: page(ref('Listing')),
  },
  'POST /v1/listings': { summary: 'Create a listing draft', response: ref('Listing'), errors: { 400: PRICE } },
  'GET /v1/listings/{idOrSlug}': { summary: 'One own listing', response: ref('Listing') },
  'PATCH /v1/listings/{idOrSlug}': { summary: 'Change an own listing', response: ref('Listing'), errors: { 400: PRICE } },
  'POST /v1/listings/{idOrSlug}/publish': {
    summary: 'Validate and publish an own listing',
    response: ref('Listing'),
    errors: { 400: BAD_FILE, 409: 'conflict: the file changed while it was being published; retry.' },
  },
  'POST /v1/listings/{idOrSlug}/unpublish': { summary: 'Unpublish an own listing', response: ref('Listing') },

  'POST /v1/purchases': {
    summary: 'Open a checkout session for an asset',
    example: { asset: 'grasp-policy' },
    response: ref('CheckoutSession'),
    errors: { 409: 'conflict: the caller already bought this asset.' },
  },
  'GET /v1/purchases': { summary: 'The caller’s completed purchases', query: [...CREATED, ...PAGE], response: page(ref('Purchase')) },

  'GET /v1/balance': {
    summary: 'The creator’s balance from the journal, now or as of a past moment',
    query: [{ name: 'as_of', description: 'ISO 8601 instant with its offset: the books as they stood then (events recorded strictly before it). A date alone is midnight UTC; a date-time without an offset is 400.', schema: { type: 'string', format: 'date-time' } }],
    response: ref('Balance'),
  },
  'GET /v1/balance/history': {
    summary: 'The creator’s balance interval by interval: opening, activity by reporting category, closing',
    query: [
      { name: 'from', description: 'ISO 8601; rounded down to the start of its interval (UTC; weeks start on Monday). Default: 30 days before `to`.', schema: { type: 'string', format: 'date-time' } },
      { name: 'to', description: 'ISO 8601, exclusive. Default: now.', schema: { type: 'string', format: 'date-time' } },
      { name: 'interval', description: 'day (default), week or month; at most 366 intervals.', schema: { type: 'string', enum: ['day', 'week', 'month'] } },
    ],
    response: ref('BalanceHistory'),
  },
  'GET /v1/balance_transactions': {
    summary: 'The creator’s ledger: sales, refunds and payouts',
    query: [
      { name: 'type', description: 'Only entries of this type.', schema: { type: 'string', enum: ['sale', 'refund', 'payout', 'dispute', 'dispute_reversal', 'adjustment'] } },
      ...CREATED,
      { name: 'payout', description: 'Only the sales and refunds this payout (po_...) paid out; their net_cents add up to its amount.', schema: { type: 'string', maxLength: 200 } },
      ...PAGE,
    ],
    response: page(ref('BalanceTransaction'), { summary: ref('BalanceSummary'), payouts_paused: { type: 'boolean' }, payouts_pause: ref('PayoutsPause') }),
    responseExample: { items: [RESPONSE_EXAMPLES.BalanceTransaction], next_cursor: null, has_more: false, summary: RESPONSE_EXAMPLES.BalanceSummary, payouts_paused: false, payouts_pause: null },
    errors: { 404: 'not_found: no such payout on this ledger.' },
  },
  'GET /v1/payouts': {
    summary: 'Transfers to the creator, and what is owed now',
    query: [...CREATED, ...PAGE],
    response: page(ref('Payout'), { amount_owed_cents: { type: 'integer' }, currency: { type: 'string' }, payouts_paused: { type: 'boolean' }, payouts_pause: ref('PayoutsPause') }),
    responseExample: { items: [RESPONSE_EXAMPLES.Payout], next_cursor: null, has_more: false, amount_owed_cents: 12125, currency: 'usd', payouts_paused: false, payouts_pause: null },
  },

  'GET /v1/inference/models': { summary: 'Inference models and their prices', response: ref('InferenceModels') },
  'GET /v1/openai/models': {
    summary: 'Inference models, as OpenAI lists them',
    description: 'The OpenAI-compatible base URL is `/v1/openai`: point an `openai` client’s `baseURL` there.',
    response: ref('OpenAIModelList'),
  },
  'GET /v1/openai/models/{id}': {
    summary: 'One inference model, as OpenAI retrieves it',
    response: ref('InferenceModel'),
    errors: { 404: 'model_not_found: no such inference model.' },
  },
  'POST /v1/chat/completions': CHAT_COMPLETIONS,
  'POST /v1/openai/chat/completions': { ...CHAT_COMPLETIONS, summary: 'OpenAI-compatible chat completion, at the OpenAI base URL' },
  'GET /v1/usage': {
    summary: 'Inference usage of the caller’s account, in the key’s mode',
    query: [{ name: 'days', description: 'Window in days, 1-365 (default 30).', schema: { type: 'integer', minimum: 1, maximum: 365, default: 30 } }],
    response: ref('Usage'),
  },

  'POST /v1/factory/jobs': {
    summary: 'Start a generation job from a prompt (spends one credit)',
    example: { prompt: 'a 6-DoF arm with a parallel gripper, 0.9 m reach, 5 kg payload' },
    response: ref('FactoryJob'),
    errors: { 402: 'insufficient_credits: no generation credit left in the key’s mode.' },
  },
  'GET /v1/factory/jobs': { summary: 'The caller’s generation jobs, newest first', query: PAGE, response: page(ref('FactoryJob')) },
  'GET /v1/factory/jobs/{id}': { summary: 'One generation job (poll it)', response: ref('FactoryJob') },
  'POST /v1/factory/jobs/{id}/clarify': {
    summary: 'Answer the job’s questions (in awaiting_clarification)',
    example: { answers: [{ id: 'q_dof', answer: '6' }] },
    response: ref('FactoryJob'),
    errors: { 400: 'invalid_request naming the current stage; validation_failed: an unknown question id or a missing answer.' },
  },
  'POST /v1/factory/jobs/{id}/approve': { summary: 'Approve the plan and build the artifact', response: ref('FactoryJob'), errors: { 400: 'invalid_request naming the current stage.' } },
  'POST /v1/factory/jobs/{id}/regenerate': {
    summary: 'Plan again, or build again (spends one credit)',
    query: [{ name: 'stage', description: 'plan or build.', schema: { type: 'string', enum: ['plan', 'build'] } }],
    response: ref('FactoryJob'),
    errors: { 400: 'invalid_request naming the current stage; validation_failed: stage missing or not plan/build.', 402: 'insufficient_credits: a rebuild needs a credit.' },
  },
  'POST /v1/factory/jobs/{id}/publish': {
    summary: 'Publish the reviewed artifact as a listing',
    example: { price_cents: 1500 },
    response: ref('FactoryJob'),
    errors: { 400: `invalid_request naming the current stage; ${PRICE}` },
  },

  'POST /v1/webhook_endpoints': { summary: 'Register a webhook endpoint (its secret is shown once)', response: ref('WebhookEndpoint') },
  'GET /v1/webhook_endpoints': { summary: 'The caller’s webhook endpoints', query: PAGE, response: page(ref('WebhookEndpoint')) },
  'GET /v1/webhook_endpoints/{id}': { summary: 'One webhook endpoint', response: ref('WebhookEndpoint') },
  'PATCH /v1/webhook_endpoints/{id}': { summary: 'Change or pause a webhook endpoint', response: ref('WebhookEndpoint') },
  'DELETE /v1/webhook_endpoints/{id}': {
    summary: 'Delete a webhook endpoint',
    response: object({ id: { type: 'string' }, deleted: { const: true } }),
    responseExample: { id: 'we_3Df6Gh9Jk2Lz5Xc8Vb1Nm4Qw', deleted: true },
  },
  'GET /v1/webhook_endpoints/{id}/events': { summary: 'The delivery log of an endpoint, newest first', query: [...CREATED, ...PAGE], response: page(ref('WebhookDelivery')) },
  'POST /v1/webhook_endpoints/{id}/rotate_secret': {
    summary: 'Roll the signing secret (the new one is shown once)',
    description: 'Deliveries carry a v1 signature with the new secret and, until `previous_secret_expires_at`, one with the old: receivers accept either while they switch.',
    example: { expires_in: 86400 },
    bodyOptional: true,
    response: ref('WebhookEndpoint'),
  },
  'POST /v1/webhook_endpoints/{id}/test': {
    summary: 'Send a signed webhook.test event to this endpoint',
    response: ref('WebhookTest'),
    errors: { 400: 'invalid_request: the endpoint is disabled.' },
  },
  'POST /v1/webhook_endpoints/{id}/deliveries/{delivery_id}/retry': {
    summary: 'Attempt a delivery again now (one that succeeded or failed)',
    response: ref('WebhookDelivery'),
    errors: { 400: 'invalid_request: the endpoint is disabled.', 409: 'conflict: the delivery is pending, its next attempt scheduled already.' },
  },

  'GET /v1/events': {
    summary: 'The caller’s events, newest first, as webhooks send them',
    description: 'Every public event of the account in the key’s mode, whether or not an endpoint received it: what a receiver catches up from.',
    query: [
      { name: 'type', description: 'Only events of this type; several comma-separated.', schema: { type: 'string', examples: ['listing.purchased', 'payout.paid,payout.failed'] } },
      ...CREATED,
      ...PAGE,
    ],
    response: page(ref('Event')),
  },
  'GET /v1/events/{id}': { summary: 'One event of the caller’s, as webhooks send it', response: ref('Event') },
};

/**
 * operationIds in verbNoun form (issue 42), what SDK generators name their methods after,
 * instead of SwaggerModule's `<Controller>_<method>`. One line per operation of OPERATIONS:
 * document.ts fails the build on an operation without one, and a test checks they are unique.
 */
export const OPERATION_IDS: Record<string, string> = {
  'GET /v1/me': 'getMe',
  'GET /v1/models': 'listModels',
  'POST /v1/models': 'createModel',
  'GET /v1/models/{idOrSlug}': 'getModel',
  'PATCH /v1/models/{idOrSlug}': 'updateModel',
  'DELETE /v1/models/{idOrSlug}': 'deleteModel',
  'POST /v1/models/{idOrSlug}/download': 'createDownload',
  'GET /v1/uploads': 'getUploadLimits',
  'POST /v1/uploads': 'createUpload',
  'POST /v1/uploads/parts': 'createUploadParts',
  'POST /v1/uploads/complete': 'completeUpload',
  'POST /v1/uploads/abort': 'abortUpload',
  'PUT /v1/uploads': 'checkUpload',
  'GET /v1/datasets': 'listDatasets',
  'POST /v1/datasets': 'createDataset',
  'GET /v1/datasets/{idOrSlug}': 'getDataset',
  'PATCH /v1/datasets/{idOrSlug}': 'updateDataset',
  'DELETE /v1/datasets/{idOrSlug}': 'deleteDataset',
  'POST /v1/datasets/{idOrSlug}/publish': 'publishDataset',
  'GET /v1/datasets/{idOrSlug}/preview': 'getDatasetPreview',
  'POST /v1/datasets/{idOrSlug}/shards': 'createShard',
  'GET /v1/datasets/{idOrSlug}/shards': 'listShards',
  'GET /v1/datasets/{idOrSlug}/shards/{path}': 'getShard',
  'GET /v1/listings': 'listListings',
  'POST /v1/listings': 'createListing',
  'GET /v1/listings/{idOrSlug}': 'getListing',
  'PATCH /v1/listings/{idOrSlug}': 'updateListing',
  'POST /v1/listings/{idOrSlug}/publish': 'publishListing',
  'POST /v1/listings/{idOrSlug}/unpublish': 'unpublishListing',
  'POST /v1/purchases': 'createPurchase',
  'GET /v1/purchases': 'listPurchases',
  'GET /v1/balance': 'getBalance',
  'GET /v1/balance/history': 'getBalanceHistory',
  'GET /v1/balance_transactions': 'listBalanceTransactions',
  'GET /v1/payouts': 'listPayouts',
  'GET /v1/inference/models': 'listInferenceModels',
  'GET /v1/openai/models': 'listOpenAIModels',
  'GET /v1/openai/models/{id}': 'getOpenAIModel',
  'POST /v1/chat/completions': 'createChatCompletion',
  'POST /v1/openai/chat/completions': 'createOpenAIChatCompletion',
  'GET /v1/usage': 'getUsage',
  'POST /v1/factory/jobs': 'createJob',
  'GET /v1/factory/jobs': 'listJobs',
  'GET /v1/factory/jobs/{id}': 'getJob',
  'POST /v1/factory/jobs/{id}/clarify': 'clarifyJob',
  'POST /v1/factory/jobs/{id}/approve': 'approveJob',
  'POST /v1/factory/jobs/{id}/regenerate': 'regenerateJob',
  'POST /v1/factory/jobs/{id}/publish': 'publishJob',
  'POST /v1/webhook_endpoints': 'createWebhookEndpoint',
  'GET /v1/webhook_endpoints': 'listWebhookEndpoints',
  'GET /v1/webhook_endpoints/{id}': 'getWebhookEndpoint',
  'PATCH /v1/webhook_endpoints/{id}': 'updateWebhookEndpoint',
  'DELETE /v1/webhook_endpoints/{id}': 'deleteWebhookEndpoint',
  'GET /v1/webhook_endpoints/{id}/events': 'listWebhookDeliveries',
  'POST /v1/webhook_endpoints/{id}/rotate_secret': 'rotateWebhookSecret',
  'POST /v1/webhook_endpoints/{id}/test': 'testWebhookEndpoint',
  'POST /v1/webhook_endpoints/{id}/deliveries/{delivery_id}/retry': 'retryWebhookDelivery',
  'GET /v1/events': 'listEvents',
  'GET /v1/events/{id}': 'getEvent',
};
