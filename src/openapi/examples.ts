/**
 * Examples for generators and readers (issue 42): one per request body DTO and per response
 * schema, by the schema's name in components. document.ts puts them on every JSON request body
 * and 2xx answer (a list answer is a page of one example item); the e2e test validates each
 * against its own schema. Ids carry the prefixes the service mints (src/platform/ids.ts);
 * amounts are in cents.
 */
type Example = Record<string, unknown>;

const ACCOUNT = 'acct_4Hq8ZkT2mW9xRb3LpN6vYc1D';
const LISTING = 'lst_7Ks2NfQ9wE4rTy6UiO1pA3sD';
const DATASET = 'lst_2Gh5JkL8zX1cV4bN7mQ0wE3R';
const AT = '2026-11-02T14:30:00.000Z';
const LATER = '2026-11-05T09:12:44.000Z';
const SHA = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const STORAGE_PATH = `user/${ACCOUNT}/1793629800-grasp-policy.onnx`;
const UPLOAD_ID = '2~mX9pQ7rT4vB1nK8sL3dF6gH0jW5zC';

const asset: Example = {
  id: LISTING,
  slug: 'grasp-policy',
  title: 'Grasp Policy',
  description: 'A PPO policy for parallel-gripper grasping, trained in Isaac Sim and tested on a UR5e.',
  type: 'rl-policy',
  category: 'manipulation',
  license: 'MIT',
  version: '1.2.0',
  price: { amount: 2500, currency: 'usd' },
  tags: ['grasping', 'ppo'],
  frameworks: ['pytorch', 'onnx'],
  hardware: ['ur5e', 'jetson-orin'],
  sensors: ['rgbd-camera'],
  ros_compatible: true,
  jetson_compatible: true,
  isaac_sim_compatible: true,
  file: { name: 'grasp-policy.onnx', size: 1048576, extension: '.onnx', sha256: SHA },
  inspection: { format: 'onnx', ir_version: 8, opset: 13, producer: 'pytorch 2.4', parameters: 74, onnxruntime: 'loads' },
  readme: '# Grasp Policy\n\nInputs: 22 joint and gripper states. Outputs: 7 joint velocity targets.\n',
  downloads: 42,
  featured: false,
  author: { slug: 'acme-robotics', name: 'Acme Robotics' },
  created_at: AT,
  updated_at: LATER,
};

const listing: Example = {
  ...asset,
  object: 'listing',
  kind: 'model',
  status: 'published',
  validation_status: 'passed',
  validation_errors: [],
  storage_path: STORAGE_PATH,
  published_at: LATER,
};

const multipart: Example = {
  upload_id: UPLOAD_ID,
  part_size: 67108864,
  part_count: 2,
  parts: [
    { part_number: 1, size: 67108864, url: 'https://storage.example.com/uploads/part-1?X-Amz-Signature=3f2a' },
    { part_number: 2, size: 40108864, url: 'https://storage.example.com/uploads/part-2?X-Amz-Signature=8c1d' },
  ],
  expires_in: 3600,
};

const inferenceModel: Example = {
  id: 'robot-planner-8b',
  object: 'model',
  created: 1793629800,
  owned_by: 'robotics-marketplace',
  context_window: 32768,
  pricing: { input_usd_per_million: 0.2, output_usd_per_million: 0.6 },
};

const job: Example = {
  id: 'job_5Tg8Hj2Kl4Zx7Cv1Bn3Mq9Wr',
  object: 'factory_job',
  stage: 'review',
  prompt: 'a 6-DoF arm with a parallel gripper, 0.9 m reach, 5 kg payload',
  questions: [{ id: 'q_dof', question: 'How many degrees of freedom?' }],
  answers: [{ id: 'q_dof', answer: '6' }],
  plan: { links: 7, joints: 6, reach_m: 0.9, payload_kg: 5 },
  draft: { title: '6-DoF Arm', type: 'urdf', license: 'MIT', description: 'A 6-DoF arm with a parallel gripper.', category: 'manipulation', tags: ['arm', 'urdf'] },
  artifact: {
    storage_path: `user/${ACCOUNT}/factory/job_5Tg8Hj2Kl4Zx7Cv1Bn3Mq9Wr/arm.urdf`,
    file_name: 'arm.urdf',
    size: 18432,
    sha256: SHA,
    companions: [],
  },
  listing: null,
  credits_spent: 1,
  error: null,
  created_at: AT,
  updated_at: LATER,
};

const webhookEndpoint: Example = {
  id: 'we_3Df6Gh9Jk2Lz5Xc8Vb1Nm4Qw',
  object: 'webhook_endpoint',
  url: 'https://example.com/webhooks/marketplace',
  events: ['listing.purchased', 'payout.paid'],
  description: 'Sales notifications',
  enabled: true,
  created_at: AT,
  updated_at: LATER,
  secret: 'whsec_Zq4Wx8Ec2Rv6Tb0Yn3Um7Ik1Ol5Pa9Sd',
};

/** Request bodies, by DTO name. */
export const REQUEST_EXAMPLES: Record<string, Example> = {
  CheckUploadDto: { storage_path: STORAGE_PATH },
  ResignPartsDto: { storage_path: STORAGE_PATH, upload_id: UPLOAD_ID, part_numbers: [2] },
  CompleteUploadDto: {
    storage_path: STORAGE_PATH,
    upload_id: UPLOAD_ID,
    parts: [
      { part_number: 1, etag: '"a54357aff0632cce46d942af68356b38"' },
      { part_number: 2, etag: '"0c78aef83f66abc1fa1e8477f296d394"' },
    ],
  },
  MultipartDto: { storage_path: STORAGE_PATH, upload_id: UPLOAD_ID },
  UpdateListingDto: { price_cents: 2900, version: '1.3.0', tags: ['grasping', 'ppo', 'ur5e'] },
  DraftListingDto: { title: 'Grasp Policy', type: 'rl-policy', license: 'MIT', price_cents: 2500, category: 'manipulation' },
  CreateDatasetDto: { title: 'Kitchen Pick-and-Place Episodes', type: 'dataset', license: 'CC-BY-4.0', price_cents: 4900, category: 'manipulation', tags: ['lerobot', 'teleoperation'] },
  CreateShardDto: { name: 'data/chunk-000/episode_000000.parquet', size: 2097152, sha256: SHA },
  CreateWebhookEndpointDto: { url: 'https://example.com/webhooks/marketplace', events: ['listing.purchased', 'payout.paid'], description: 'Sales notifications' },
  UpdateWebhookEndpointDto: { enabled: false },
  ChatCompletionRequest: { model: 'robot-planner-8b', messages: [{ role: 'user', content: 'Plan a pick-and-place of a cup onto a shelf.' }], max_tokens: 256, stream: false },
};

/** 2xx answers, by response schema name. */
export const RESPONSE_EXAMPLES: Record<string, Example> = {
  Account: {
    id: ACCOUNT,
    slug: 'acme-robotics',
    name: 'Acme Robotics',
    email: 'dev@acme-robotics.example',
    created_at: AT,
    key: { id: 'key_8Jk1Lm4Nz7Xc0Vb3Qw6Er9Ty', mode: 'test', tier: 'premium', scopes: [], expires_at: null },
    credits: 3,
  },
  Asset: asset,
  Listing: listing,
  UploadLimits: { max_bytes: 53687091200, extensions: ['.onnx', '.pt', '.safetensors', '.urdf', '.zip', '.mcap', '.parquet'] },
  UploadGrant: {
    storage_path: STORAGE_PATH,
    upload_url: 'https://storage.example.com/uploads?X-Amz-Signature=7b9e',
    token: null,
    expires_in: 3600,
    file_name: 'grasp-policy.onnx',
    file_size: 1048576,
    file_extension: '.onnx',
  },
  MultipartUpload: multipart,
  UploadCompleted: { storage_path: STORAGE_PATH, size: 107217728 },
  UploadAborted: { storage_path: STORAGE_PATH, upload_id: UPLOAD_ID, aborted: true },
  UploadCheck: { exists: true, size: 1048576 },
  ShardGrant: {
    name: 'data/chunk-000/episode_000000.parquet',
    size: 2097152,
    storage_path: `user/${ACCOUNT}/datasets/${DATASET}/data/chunk-000/episode_000000.parquet`,
    upload_url: 'https://storage.example.com/shards?X-Amz-Signature=1a2b',
    token: null,
    expires_in: 3600,
  },
  ShardList: {
    items: [
      { name: 'data/chunk-000/episode_000000.parquet', size: 2097152, sha256: SHA },
      { name: 'meta/info.json', size: 1840, sha256: 'e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8' },
    ],
    count: 2,
    total_bytes: 2098992,
  },
  DatasetPreview: {
    object: 'dataset_preview',
    id: DATASET,
    layout: {
      name: 'lerobot', robot_type: 'so100', fps: 30, episodes: 2, episode_files: 2, frames: 50,
      features: { action: { dtype: 'float32', shape: [2] }, timestamp: { dtype: 'float32', shape: [1] }, 'observation.images.front': { dtype: 'video', shape: [48, 64, 3] } },
    },
    summary: {
      files: 5, total_bytes: 8921, episodes: 2, frames: 50, fps: 30, duration_s: 1.667,
      features: { action: { dtype: 'float32', shape: [2] }, timestamp: { dtype: 'float32', shape: [1] }, 'observation.images.front': { dtype: 'video', shape: [48, 64, 3] } },
      columns: [{ name: 'timestamp', type: 'FLOAT' }, { name: 'frame_index', type: 'INT64' }, { name: 'action_x', type: 'FLOAT' }],
      topics: null,
    },
    files: [
      {
        name: 'data/chunk-000/episode_000000.parquet', size: 1873, sha256: SHA, format: 'parquet',
        inspection: { format: 'parquet', created_by: 'hyparquet', rows: 25, row_groups: 1, columns: [{ name: 'timestamp', type: 'FLOAT', logical_type: null, repetition: 'REQUIRED' }], footer_bytes: 412 },
      },
    ],
    has_more: true,
    sample: {
      file: 'data/chunk-000/episode_000000.parquet', format: 'parquet', columns: ['timestamp', 'frame_index', 'action_x'],
      rows: [{ timestamp: 0, frame_index: 0, action_x: 0 }, { timestamp: 0.0333, frame_index: 1, action_x: 0.8415 }],
      total_rows: 25, truncated: false,
      notes: ['No still frame of a video is included: extracting one needs a native video decoder, which the service does not run.'],
    },
  },
  ShardDownload: { name: 'meta/info.json', size: 1840, sha256: 'e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8', url: 'https://storage.example.com/shards/meta/info.json?X-Amz-Signature=5e6f', expires_in: 300 },
  Download: { url: 'https://storage.example.com/models/grasp-policy.onnx?X-Amz-Signature=9c8d', expires_in: 300, file_name: 'grasp-policy.onnx', file_size: 1048576, file_sha256: SHA },
  CheckoutSession: {
    object: 'checkout_session',
    id: 'cs_test_6Yh9Uj2Ik5Ol8Pz1Xa4Sd7Fg',
    status: 'requires_payment',
    checkout_url: 'https://checkout.example.com/pay/cs_test_6Yh9Uj2Ik5Ol8Pz1Xa4Sd7Fg',
    expires_at: 1793631600,
    amount_cents: 2500,
    currency: 'usd',
    asset: { id: LISTING, slug: 'grasp-policy', title: 'Grasp Policy' },
  },
  Purchase: {
    id: 'pur_9Qa2Ws5Ed8Rf1Tg4Yh7Uj0Ik',
    object: 'purchase',
    asset: { id: LISTING, slug: 'grasp-policy', title: 'Grasp Policy' },
    amount_cents: 2500,
    currency: 'usd',
    status: 'paid',
    checkout_session_id: 'cs_test_6Yh9Uj2Ik5Ol8Pz1Xa4Sd7Fg',
    created_at: AT,
    amount_refunded_cents: 0,
  },
  BalanceTransaction: {
    id: 'txn_1Zx4Cv7Bn0Mq3We6Rt9Yu2Io',
    type: 'sale',
    amount_cents: 2500,
    fee_cents: 375,
    net_cents: 2125,
    currency: 'usd',
    status: 'available',
    created_at: AT,
    source: { purchase_id: 'pur_9Qa2Ws5Ed8Rf1Tg4Yh7Uj0Ik', asset: { slug: 'grasp-policy', title: 'Grasp Policy' } },
    description: 'Sale of Grasp Policy',
    reporting_category: 'charge',
    balance_after_cents: 12125,
  },
  BalanceSummary: {
    currency: 'usd',
    gross_cents: 15000,
    platform_fee_cents: 2250,
    earned_cents: 12750,
    refunded_cents: 625,
    paid_out_cents: 0,
    balance_cents: 12125,
    sale_count: 6,
    refund_count: 1,
  },
  Balance: { object: 'balance', currency: 'usd', available_cents: 12125, receivable_cents: 0, in_transit_cents: 0, withheld_cents: 0, as_of: LATER, payouts_paused: false, payouts_pause: null },
  BalanceHistory: {
    object: 'balance_history',
    interval: 'day',
    currency: 'usd',
    items: [
      {
        start: '2026-11-02T00:00:00.000Z',
        end: '2026-11-03T00:00:00.000Z',
        opening_balance_cents: 10000,
        activity: { sales_cents: 2500, fees_cents: -375, refunds_cents: 0, payouts_cents: 0, disputes_cents: 0, adjustments_cents: 0 },
        closing_balance_cents: 12125,
      },
    ],
  },
  Payout: {
    id: 'po_4Rt7Yu0Io3Pa6Sd9Fg2Hj5Kl',
    object: 'payout',
    amount_cents: 12125,
    currency: 'usd',
    status: 'paid',
    created_at: AT,
    arrival_date: LATER,
    failure_code: null,
    failure_message: null,
  },
  Usage: {
    window_days: 30,
    summary: { calls: 128, total_tokens: 96000, cost_micros: 38400, cost_usd: 0.0384 },
    by_model: [{ model: 'robot-planner-8b', calls: 128, total_tokens: 96000, cost_usd: 0.0384 }],
  },
  InferenceModel: inferenceModel,
  InferenceModels: { object: 'list', items: [inferenceModel], data: [inferenceModel] },
  OpenAIModelList: { object: 'list', data: [inferenceModel] },
  WebhookEndpoint: webhookEndpoint,
  WebhookDelivery: {
    id: 'whd_8Ik1Ol4Pz7Xa0Sd3Fg6Hj9Kl',
    object: 'webhook_delivery',
    event_id: 'evt_2Wq5Er8Ty1Ui4Op7As0Df3Gh',
    event_type: 'listing.purchased',
    status: 'succeeded',
    attempts: 1,
    response_status: 200,
    error: null,
    next_attempt_at: null,
    created_at: AT,
    updated_at: AT,
  },
  WebhookTest: {
    object: 'webhook_test',
    endpoint_id: 'we_3Df6Gh9Jk2Lz5Xc8Vb1Nm4Qw',
    event_id: 'evt_6Yt9Re2Wq5Az8Sx1Dc4Fv7Gb',
    event_type: 'webhook.test',
    delivery_id: 'whd_0Pl3Ok6Ij9Uh2Yg5Tf8Rd1Es',
  },
  Event: {
    id: 'evt_2Wq5Er8Ty1Ui4Op7As0Df3Gh',
    object: 'event',
    type: 'listing.purchased',
    created: 1793629800,
    data: { purchase_id: 'pur_9Qa2Ws5Ed8Rf1Tg4Yh7Uj0Ik', listing_id: LISTING, amount_cents: 2500, currency: 'usd' },
  },
  ChatCompletion: {
    id: 'chatcmpl-7Hj2Kl5Zx8Cv',
    object: 'chat.completion',
    created: 1793629800,
    model: 'robot-planner-8b',
    choices: [{ index: 0, message: { role: 'assistant', content: '1. Move above the cup. 2. Grasp. 3. Lift 10 cm. 4. Move to the shelf. 5. Release.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 18, completion_tokens: 32, total_tokens: 50 },
  },
  FactoryJob: job,
};
