/**
 * Response shapes of the public API, as JSON Schema (OpenAPI 3.1 is JSON Schema 2020-12).
 * Handlers return plain objects, not classes, so these are declared here once and named
 * per operation in operations.ts; the e2e test validates real responses against them.
 * Objects allow unknown properties: adding a field is not a breaking change (spec part 9).
 */
import { FIELD_PROBLEM_CODES } from '../platform/validation-answer';

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const bool: Schema = { type: 'boolean' };
const timestamp: Schema = { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' };
const strings: Schema = { type: 'array', items: str };
const nullable = (s: Schema): Schema => ({ ...s, type: [s.type, 'null'] });

/** An object whose listed properties are all present. */
export const object = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  ...extra,
});

/** Properties a schema may carry besides its required ones. */
const withOptional = (schema: Schema, properties: Record<string, Schema>): Schema => ({
  ...schema,
  properties: { ...(schema.properties as Record<string, Schema>), ...properties },
});

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** The list envelope of spec part 2; the cursor is the last item's id and is opaque. */
export const page = (items: Schema, extra: Record<string, Schema> = {}): Schema =>
  object({ items: { type: 'array', items }, next_cursor: nullable(str), has_more: bool, ...extra });

/** Codes of spec part 7 plus the ones this service adds; `code` is what clients branch on. */
export const ERROR_CODES = [
  'invalid_request',
  'validation_failed',
  'invalid_storage_path',
  'file_not_found',
  'price_too_low',
  'missing_credentials',
  'invalid_key',
  'payment_required',
  'purchase_required',
  'scope_required',
  'forbidden',
  'not_found',
  'model_not_found',
  'unsupported_parameter',
  'conflict',
  'idempotency_key_reused',
  'idempotency_key_in_use',
  'method_not_allowed',
  'request_timeout',
  'payload_too_large',
  'uri_too_long',
  'unsupported_media_type',
  'headers_too_large',
  'rate_limited',
  'service_unavailable',
  'internal_error',
];

const listingFile = nullable(
  object({ name: str, size: int, extension: str, sha256: nullable(str) }, { description: 'The artifact of a model; null for datasets, whose data is in shards.' }),
);

/** What inspection found in the published files (issue 40, docs/catalog.md); its fields after `format` depend on the format. */
const inspection = nullable({
  type: 'object',
  required: ['format'],
  properties: { format: { type: 'string', examples: ['onnx', 'safetensors', 'pytorch', 'urdf', 'zip', 'mcap', 'dataset', 'opaque'] } },
  additionalProperties: true,
  description: 'What the format\'s own reader found in the published file (a dataset: each shard\'s), readable before purchase; null before the first publish and for listings published before files were inspected.',
  examples: [{ format: 'onnx', ir_version: 8, opset: 13, producer: 'pytorch 2.4', inputs: [{ name: 'obs', elem_type: 'float', shape: ['batch', 4] }], outputs: [{ name: 'action', elem_type: 'float', shape: ['batch', 2] }], parameters: 74, onnxruntime: 'loads' }],
});

const LAYOUT_EXAMPLE = {
  name: 'lerobot',
  robot_type: 'so100',
  fps: 30,
  episodes: 50,
  episode_files: 50,
  frames: 19631,
  features: { action: { dtype: 'float32', shape: [6] }, 'observation.state': { dtype: 'float32', shape: [6] }, 'observation.images.front': { dtype: 'video', shape: [480, 640, 3] } },
};

/** A dataset's layout (issue 41 item 4, decision 0071): its name, then what that layout knows. */
const layout = nullable({
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', enum: ['lerobot', 'rlds', 'robomimic', 'rosbag', 'files'] } },
  additionalProperties: true,
  description:
    'Datasets only: the layout its files follow and what it knows. lerobot (meta/info.json): robot_type, fps, episodes, episode_files, frames, features; ' +
    'rlds (dataset_info.json / features.json): name, splits, episodes, tfrecord_files; robomimic (HDF5 data/demo_*): file, demos, actions, observations; ' +
    'rosbag (.bag, .mcap, .db3): recordings, duration_s, topics with message counts; files: none of these. Null until the files are inspected at publish.',
  examples: [LAYOUT_EXAMPLE],
});

const publicAsset = object({
  id: str,
  slug: str,
  title: str,
  description: str,
  type: { type: 'string', examples: ['onnx-model', 'rl-policy', 'ros-package', 'dataset'] },
  category: str,
  license: str,
  version: str,
  price: object({ amount: { type: 'integer', minimum: 0, description: 'cents' }, currency: { type: 'string', examples: ['usd'] } }),
  tags: strings,
  frameworks: strings,
  hardware: strings,
  sensors: strings,
  ros_compatible: bool,
  jetson_compatible: bool,
  isaac_sim_compatible: bool,
  file: listingFile,
  inspection,
  readme: nullable({ type: 'string', description: 'The model card: Markdown as the seller wrote it (at most 64 KiB of UTF-8); null when there is none. Render it sanitized: the console does (docs/catalog.md).' }),
  downloads: int,
  featured: bool,
  author: object({ slug: str, name: str }),
  created_at: timestamp,
  updated_at: timestamp,
});

export const SCHEMAS: Record<string, Schema> = {
  ErrorEnvelope: object(
    {
      error: withOptional(
        object(
          {
            code: { type: 'string', description: `Stable; one of ${ERROR_CODES.join(', ')}.`, examples: ERROR_CODES },
            message: { type: 'string', description: 'For humans; may change. validation_failed names every problem: `Invalid request: "type" is required; "license" is required.`, or `Unknown parameter "tittle".`' },
            request_id: { type: 'string', description: 'Also sent in the x-request-id header.' },
          },
          { description: 'Some codes attach more fields (scope_required: scope, scopes; purchase_required: the price; unsupported_parameter: param; idempotency_key_reused: differs; validation_failed: errors, and for a publish whose files failed inspection validation_errors, one { code, message } a file).' },
        ),
        {
          errors: {
            type: 'array',
            description: 'validation_failed: every problem of the request, one per field.',
            items: object({
              field: { type: 'string', description: 'The body field or query parameter, as sent: `title`, `answers[0].id`, `created[gt]`.' },
              code: { type: 'string', description: `Stable; one of ${FIELD_PROBLEM_CODES.join(', ')}.`, examples: [...FIELD_PROBLEM_CODES] },
              message: { type: 'string', description: 'For humans; may change.' },
            }),
          },
        },
      ),
    },
    {
      description: 'Every non-2xx response from the service (spec part 7).',
      examples: [
        { error: { code: 'not_found', message: 'No such listing.', request_id: 'req_5f0c2a9d8e7b6a5f4e3d2c1b' } },
        {
          error: {
            code: 'validation_failed',
            message: 'Invalid request: "type" is required; "license" is required.',
            request_id: 'req_5f0c2a9d8e7b6a5f4e3d2c1c',
            errors: [
              { field: 'type', code: 'required', message: '"type" is required.' },
              { field: 'license', code: 'required', message: '"license" is required.' },
            ],
          },
        },
      ],
    },
  ),
  Account: object(
    {
      id: str,
      slug: str,
      name: str,
      email: str,
      created_at: timestamp,
      key: object({
        id: { type: 'string', description: 'The key’s public id (key_...), as `svc keys list` shows it; never its secret.' },
        mode: { type: 'string', enum: ['test', 'live'] },
        tier: { type: 'string', enum: ['free', 'premium'], description: 'Premium keys may call the inference API.' },
        scopes: { ...strings, description: 'Empty: the key is unrestricted (it carries every scope).' },
        expires_at: nullable({ ...timestamp, description: 'When the key stops working; null: never.' }),
      }),
      credits: { ...int, description: 'Generation credits left in the key’s mode.' },
    },
    { description: 'The account behind the key, the key used, and the credits left in its mode.' },
  ),
  Asset: { ...withOptional(publicAsset, { layout }), description: 'A published model or dataset (spec part 2, model object); a dataset also has `layout`.' },
  Listing: {
    allOf: [
      ref('Asset'),
      object({
        object: { const: 'listing' },
        kind: { type: 'string', enum: ['model', 'dataset'] },
        status: { type: 'string', enum: ['draft', 'published', 'unpublished'] },
        validation_status: { type: 'string', enum: ['pending', 'passed', 'failed'], description: 'pending: not yet published, or its files above the inline limit are being inspected in the background (then published, or failed with listing.validation_failed).' },
        validation_errors: { type: 'array', items: object({ code: str, message: str }) },
        storage_path: nullable(str),
        published_at: nullable(timestamp),
      }),
    ],
    description: "The seller's view of one of their own models or datasets, in any state.",
  },
  UploadLimits: object({ max_bytes: int, extensions: strings }),
  UploadGrant: withOptional(
    object(
      {
        storage_path: { type: 'string', description: 'user/<account_id>/<unix_seconds>-<file_name>' },
        upload_url: nullable({ type: 'string', description: 'PUT the whole file here, with no Authorization header; null above 5 GiB (use multipart).' }),
        token: nullable(str),
        expires_in: { type: 'integer', description: 'seconds' },
        file_name: str,
        file_size: int,
        file_extension: { type: 'string', examples: ['.onnx'] },
      },
      { description: 'A signed storage URL for one upload; the declared size is also the cap. Above the multipart threshold, part URLs too.' },
    ),
    {
      sha256: { type: 'string', description: 'The sha256 the upload URL is bound to, when one was given: a PUT of other bytes is refused.' },
      upload_headers: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Headers the PUT to upload_url must carry (S3 with a bound sha256: x-amz-checksum-sha256); absent when none are needed.',
      },
      multipart: ref('MultipartUpload'),
    },
  ),
  MultipartUpload: object(
    {
      upload_id: str,
      part_size: { type: 'integer', description: 'bytes in every part but the last' },
      part_count: int,
      parts: {
        type: 'array',
        items: object({ part_number: int, size: int, url: { type: 'string', description: 'PUT exactly `size` bytes here; keep the ETag header of the answer.' } }),
      },
      expires_in: { type: 'integer', description: 'seconds the part URLs stay valid; POST /v1/uploads/parts signs more, or again' },
    },
    { description: 'A multipart upload: PUT each part to its URL (in parallel if you like), then POST /v1/uploads/complete with every part’s ETag. `parts` holds 100 URLs at most; POST /v1/uploads/parts gives the others.' },
  ),
  UploadCompleted: object({ storage_path: str, size: int }),
  UploadAborted: object({ storage_path: str, upload_id: str, aborted: bool }),
  UploadCheck: object({ exists: bool, size: int }),
  ShardGrant: withOptional(
    object({ name: str, size: int, storage_path: str, upload_url: nullable(str), token: nullable(str), expires_in: int }),
    {
      sha256: { type: 'string', description: 'The sha256 the upload URL is bound to, when one was given: a PUT of other bytes is refused.' },
      upload_headers: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Headers the PUT to upload_url must carry (S3 with a bound sha256: x-amz-checksum-sha256); absent when none are needed.',
      },
      multipart: ref('MultipartUpload'),
    },
  ),
  ShardList: object({ items: { type: 'array', items: object({ name: str, size: int, sha256: nullable(str) }) }, count: int, total_bytes: int }),
  DatasetPreview: object(
    {
      object: { const: 'dataset_preview' },
      id: str,
      layout,
      summary: object(
        {
          files: int,
          total_bytes: int,
          episodes: nullable(int),
          frames: nullable(int),
          fps: nullable({ type: 'number' }),
          duration_s: nullable({ type: 'number' }),
          features: nullable({ type: 'object', additionalProperties: true }),
          columns: nullable({ type: 'array', items: object({ name: str, type: nullable(str) }) }),
          topics: nullable({ type: 'array', items: object({ topic: str, messages: nullable(int) }) }),
        },
        { description: 'What the layout knows, null where it does not: episodes, frames, fps, duration, features (the layout\'s) and columns (the first tabular file\'s) with their types, topics with message counts.' },
      ),
      files: {
        type: 'array',
        items: object({ name: str, size: int, sha256: nullable(str), format: nullable(str), inspection: nullable({ type: 'object', additionalProperties: true }) }),
        description: 'A page of the files by name (limit=, default 100, at most 1000; after= the last name of the previous page; prefix=). A draft\'s files are not inspected yet: format and inspection null.',
      },
      has_more: bool,
      sample: nullable(
        object(
          {
            file: nullable(str),
            format: nullable({ type: 'string', enum: ['parquet', 'csv', 'jsonl'] }),
            columns: strings,
            rows: { type: 'array', items: { type: 'object', additionalProperties: true }, maxItems: 20 },
            total_rows: nullable(int),
            truncated: bool,
            notes: strings,
          },
          {
            description:
              'The first rows (at most 20) of the first tabular file by name (Parquet, CSV, JSONL), read once at publish; its JSON is at most 256 KiB, rows (or a wide first row\'s columns) left out past that, truncated true and a note saying so. ' +
              'No still frame of a video is included (that needs a native decoder the service does not run); a dataset with videos says so in notes. Null for a draft and for datasets published before previews.',
          },
        ),
      ),
    },
    { description: 'What a dataset holds, for anyone who may read it, bought or not: never a download URL.' },
  ),
  ShardDownload: object({ name: str, size: int, sha256: nullable(str), url: str, expires_in: int }),
  Download: object(
    { url: str, expires_in: { type: 'integer', description: 'seconds' }, file_name: str, file_size: int, file_sha256: nullable(str) },
    { description: 'A signed download URL for the asset file.' },
  ),
  CheckoutSession: object({
    object: { const: 'checkout_session' },
    id: str,
    status: { type: 'string', examples: ['requires_payment'] },
    checkout_url: { type: 'string', description: 'The hosted payment page for the buyer.' },
    expires_at: { type: 'integer', description: 'Unix seconds' },
    amount_cents: int,
    currency: str,
    asset: object({ id: str, slug: str, title: str }),
  }),
  Purchase: object({
    id: str,
    object: { const: 'purchase' },
    asset: object({ id: str, slug: str, title: str }),
    amount_cents: int,
    currency: str,
    status: { type: 'string', enum: ['paid', 'refunded', 'disputed'] },
    checkout_session_id: str,
    created_at: timestamp,
    amount_refunded_cents: { ...int, description: 'What went back to the buyer so far; the purchase stays paid until all of it has.' },
  }),
  BalanceTransaction: object({
    id: str,
    type: { type: 'string', enum: ['sale', 'refund', 'payout', 'dispute', 'dispute_reversal', 'adjustment'] },
    amount_cents: int,
    fee_cents: int,
    net_cents: int,
    currency: str,
    status: str,
    created_at: timestamp,
    source: withOptional(
      object(
        {
          purchase_id: nullable({ type: 'string', description: 'The purchase behind the line; null on a payout (and any line no purchase made).' }),
          asset: nullable(object({ slug: str, title: str }, { description: 'The asset sold; null where purchase_id is.' })),
        },
        { description: 'The spec’s `{ purchase_id, asset }` on every line type, so one client type reads them all.' },
      ),
      { payout_id: { type: 'string', description: 'On a payout line only: the payout (GET /v1/payouts).' } },
    ),
    description: str,
    reporting_category: { type: 'string', enum: ['charge', 'refund', 'payout', 'dispute', 'dispute_reversal', 'adjustment'] },
    balance_after_cents: int,
  }),
  Balance: withOptional(
    object(
      { object: { const: 'balance' }, currency: str, available_cents: int, receivable_cents: int, in_transit_cents: int, withheld_cents: int, as_of: timestamp },
      { description: 'What the platform owes the creator: available now (never below 0), in payouts under way, and withheld for open disputes; receivable_cents is what the creator owes the platform (a refund or lost dispute after a payout), recovered from later sales first. Without `as_of`, also whether payouts are paused and why.' },
    ),
    { payouts_paused: bool, payouts_pause: ref('PayoutsPause') },
  ),
  PayoutsPause: nullable(
    object(
      {
        reason: { type: 'string', description: '`destination_refused: <processor code>` (the processor refused the payout destination; setting a destination lifts it) or `paused_by_operator`.' },
        since: timestamp,
        failure_code: nullable({ type: 'string', description: 'The processor’s code when its refusal paused payouts (e.g. resource_missing).' }),
      },
      { description: 'Why payouts are paused and since when; null while they run.' },
    ),
  ),
  BalanceHistory: object(
    {
      object: { const: 'balance_history' },
      interval: { type: 'string', enum: ['day', 'week', 'month'] },
      currency: str,
      items: {
        type: 'array',
        items: object({
          start: timestamp,
          end: timestamp,
          opening_balance_cents: int,
          activity: object({ sales_cents: int, fees_cents: int, refunds_cents: int, payouts_cents: int, disputes_cents: int, adjustments_cents: int }),
          closing_balance_cents: int,
        }),
      },
    },
    { description: 'Each interval’s closing balance is its opening plus its activity, and the next interval’s opening.' },
  ),
  BalanceSummary: object({
    currency: str,
    gross_cents: int,
    platform_fee_cents: int,
    earned_cents: int,
    refunded_cents: int,
    paid_out_cents: int,
    balance_cents: int,
    sale_count: int,
    refund_count: int,
  }),
  Payout: object(
    {
      id: str,
      object: { const: 'payout' },
      amount_cents: int,
      currency: str,
      status: { type: 'string', enum: ['in_transit', 'paid', 'failed'] },
      created_at: timestamp,
      arrival_date: nullable(timestamp),
      failure_code: nullable(str),
      failure_message: nullable(str),
    },
    { description: 'A transfer to the creator: in_transit from its start, then paid, or failed with the processor\'s failure_code (its amount is then back in the balance).' },
  ),
  Usage: object({
    window_days: int,
    summary: object({ calls: int, total_tokens: int, cost_micros: int, cost_usd: { type: 'number' } }),
    by_model: { type: 'array', items: object({ model: str, calls: int, total_tokens: int, cost_usd: { type: 'number' } }) },
  }),
  InferenceModels: object(
    { object: { const: 'list' }, items: { type: 'array', items: ref('InferenceModel') }, data: { type: 'array', items: ref('InferenceModel') } },
    { description: 'The inference models with the prices in force; `data` (OpenAI’s name) holds the same list as `items`.' },
  ),
  InferenceModel: object(
    {
      id: str,
      object: { const: 'model' },
      created: { type: 'integer', description: 'Unix seconds' },
      owned_by: str,
      context_window: int,
      pricing: object({ input_usd_per_million: { type: 'number' }, output_usd_per_million: { type: 'number' } }),
    },
    { description: 'OpenAI’s model object, with our context window and prices in force as extra fields.' },
  ),
  OpenAIModelList: object(
    { object: { const: 'list' }, data: { type: 'array', items: ref('InferenceModel') } },
    { description: 'OpenAI’s model list, as `client.models.list()` reads it.' },
  ),
  WebhookEndpoint: {
    type: 'object',
    required: ['id', 'url', 'events', 'enabled'],
    properties: {
      id: str,
      object: { const: 'webhook_endpoint' },
      url: str,
      events: strings,
      description: str,
      enabled: bool,
      created_at: timestamp,
      updated_at: timestamp,
      secret: { type: 'string', description: 'whsec_…; only in the create and rotate_secret responses.' },
      previous_secret_expires_at: { ...nullable(timestamp), description: 'Only in the rotate_secret response: until when the old secret signs too (null: it stopped at once).' },
    },
  },
  WebhookDelivery: object(
    {
      id: str,
      object: { const: 'webhook_delivery' },
      event_id: str,
      event_type: str,
      status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
      attempts: int,
      response_status: nullable(int),
      error: nullable(str),
      next_attempt_at: nullable(timestamp),
      created_at: timestamp,
      updated_at: timestamp,
    },
    { description: 'One event sent to an endpoint.' },
  ),
  WebhookTest: object(
    {
      object: { const: 'webhook_test' },
      endpoint_id: str,
      event_id: { type: 'string', description: 'evt_…; the id of the webhook.test event sent.' },
      event_type: { const: 'webhook.test' },
      delivery_id: { type: 'string', description: 'whd_…; its entry in the endpoint’s delivery log, once queued.' },
    },
    { description: 'A webhook.test event queued for one endpoint.' },
  ),
  Event: object(
    {
      id: { type: 'string', description: 'evt_…; the id deliveries of this event carry.' },
      object: { const: 'event' },
      type: { type: 'string', examples: ['listing.purchased', 'payout.paid'] },
      created: { type: 'integer', description: 'Unix seconds' },
      data: { type: 'object', description: 'As in the webhook delivery of this type (docs/webhooks.md).' },
    },
    { description: 'An event: the body of its webhook delivery, with `object`.' },
  ),
  ChatCompletion: {
    ...object({
      id: str,
      object: { const: 'chat.completion' },
      created: { type: 'integer', description: 'Unix seconds' },
      model: str,
      choices: { type: 'array', items: object({ index: int, message: object({ role: { const: 'assistant' }, content: nullable(str) }), finish_reason: str }) },
      usage: object({ prompt_tokens: int, completion_tokens: int, total_tokens: int }),
    }),
    description:
      "OpenAI's chat completion object (https://platform.openai.com/docs/api-reference/chat/object); only the fields clients " +
      'branch on are listed here.',
    externalDocs: { url: 'https://platform.openai.com/docs/api-reference/chat/object' },
  },
  FactoryJob: object(
    {
      id: str,
      object: { const: 'factory_job' },
      stage: { type: 'string', enum: ['queued', 'analyzing', 'awaiting_clarification', 'planning', 'awaiting_approval', 'generating', 'review', 'published'] },
      prompt: str,
      questions: { type: 'array', items: object({ id: str, question: str }) },
      answers: { type: 'array', items: object({ id: str, answer: str }) },
      plan: nullable({ type: 'object', description: 'What the artifact will hold: spaces and layers, or links, joints and dimensions, with the defaults assumed.' }),
      draft: nullable(object({ title: str, type: str, license: str, description: str, category: str, tags: strings })),
      artifact: nullable(
        object({
          storage_path: str,
          file_name: str,
          size: int,
          sha256: str,
          companions: { type: 'array', items: object({ file_name: str, storage_path: str, size: int, sha256: str }) },
        }),
      ),
      listing: nullable({ type: 'object', description: 'The listing publish created.' }),
      credits_spent: int,
      error: nullable(object({ code: str, message: str, stage: str })),
      created_at: timestamp,
      updated_at: timestamp,
    },
    { description: 'A generation job (decisions section 7).' },
  ),
  ChatCompletionRequest: {
    type: 'object',
    required: ['model', 'messages'],
    properties: { model: str, messages: { type: 'array', items: { type: 'object' } }, stream: bool, max_tokens: int, n: int },
    // Issue 24: every other OpenAI field (tools, response_format, seed, logprobs, ...) is accepted.
    additionalProperties: true,
    description:
      "OpenAI's chat completion request (https://platform.openai.com/docs/api-reference/chat/create); the `openai` client works unchanged. " +
      'Live keys: every field is passed to the engine as sent (tools, tool_choice, response_format, seed, logprobs, n and any other), ' +
      'and its answer, tool calls included, comes back as it gave it. Test keys: the sandbox honours n (up to 8) and ' +
      'response_format text or json_object, and answers 400 unsupported_parameter naming any field it cannot honour (docs/inference.md).',
  },
};
