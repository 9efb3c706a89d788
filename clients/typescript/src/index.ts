/**
 * @robotics-marketplace/sdk: the robotics marketplace's API from Node.js.
 *
 *   import { Marketplace } from '@robotics-marketplace/sdk';
 *   const client = new Marketplace({ apiKey: process.env.SVC_API_KEY, baseUrl: 'https://api.example.com' });
 *   for await (const model of client.models.list({ type: 'rl-policy' })) console.log(model.slug);
 */
export { Marketplace, Marketplace as Client, DEFAULT_BASE_URL } from './client';
export type { ClientOptions, CreateModelParams, UploadDirResult, Models, Datasets, Uploads, Purchases, Events, Payouts, BalanceTransactions, WebhookEndpoints } from './client';
export * from './errors';
export { ListIterator, Page } from './paging';
export type { PageBody } from './paging';
export { Retrying, retryable } from './http';
export type { RequestOptions } from './http';
export type { UploadedFile, Progress } from './uploads';
export { constructEvent, sign, webhooks, SIGNATURE_HEADER, DEFAULT_TOLERANCE_SECONDS } from './webhooks';
export type { WebhookEvent, ConstructEventOptions } from './webhooks';
export { sha256Of } from './downloads';
export { VERSION } from './version';
export type * from './types';
