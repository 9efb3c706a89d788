/**
 * Types of the API, taken from the OpenAPI document (src/generated/api.ts, written by
 * openapi-typescript) by path and method, so they follow the document as it changes.
 */
import type { components, paths } from './generated/api';

export type { components, paths, operations } from './generated/api';
export type Schemas = components['schemas'];

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type Op<P extends keyof paths, M extends string> = M extends keyof paths[P] ? NonNullable<paths[P][M]> : never;

/** The query parameters of `M P`. */
export type QueryOf<P extends keyof paths, M extends string> = Op<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The JSON body of `M P`. */
export type BodyOf<P extends keyof paths, M extends string> = Op<P, M> extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
/** The JSON of the 200 or 201 answer of `M P`. */
export type ResultOf<P extends keyof paths, M extends string> = Op<P, M> extends { responses: infer R }
  ? R extends { 200: infer A } ? Json<A> : R extends { 201: infer A } ? Json<A> : unknown
  : unknown;
/** One item of a list's `items`. */
export type ItemOf<P extends keyof paths, M extends string = 'get'> = ResultOf<P, M> extends { items: (infer I)[] } ? I : never;
/** Filters of a list, without the cursor (the iterator sends it). */
export type ListParams<P extends keyof paths> = Omit<QueryOf<P, 'get'>, 'cursor'>;

export type Asset = Schemas['Asset'];
export type Account = Schemas['Account'];
export type CheckoutSession = Schemas['CheckoutSession'];
export type Purchase = Schemas['Purchase'];
export type BalanceTransaction = Schemas['BalanceTransaction'];
export type Balance = Schemas['Balance'];
export type Payout = Schemas['Payout'];
export type Usage = Schemas['Usage'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type Event = Schemas['Event'];
export type ShardList = Schemas['ShardList'];
export type Download = Schemas['Download'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
