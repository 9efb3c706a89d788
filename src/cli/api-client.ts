import { AdminClient, CliError } from './admin-client';
import type { paths } from '../../clients/typescript/src/generated/api';

/*
 * Calls typed from the OpenAPI document (the TypeScript SDK's clients/typescript/src/generated/api.ts,
 * `npm run gen:api-types`):
 * a route, body field or response field that changes in the API fails the type check here
 * once the types are regenerated, and `npm run lint:openapi` fails while they are stale.
 */
type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
/** The methods a path has (openapi-typescript marks the others `?: never`). */
type MethodOf<P extends keyof paths> = { [M in Method]-?: [NonNullable<paths[P][M]>] extends [never] ? never : M }[Method];
type Operation<P extends keyof paths, M extends MethodOf<P>> = NonNullable<paths[P][M]>;
type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON request body of an operation. */
export type ApiBody<P extends keyof paths, M extends MethodOf<P>> =
  Operation<P, M> extends { requestBody: infer R } ? JsonOf<R> : Operation<P, M> extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never;
/** The JSON body of an operation's 2xx answer. */
export type ApiResult<P extends keyof paths, M extends MethodOf<P>> =
  Operation<P, M> extends { responses: infer R } ? { [S in keyof R]: S extends 200 | 201 ? JsonOf<R[S]> : never }[keyof R] : never;
/** The paths that take no path parameters (the typed call does not fill templates). */
type PlainPath = { [P in keyof paths]: P extends `${string}{${string}` ? never : P }[keyof paths];

/** A client of the public API (SVC_URL, SVC_API_KEY), for creators who script. */
export class ApiClient extends AdminClient {
  static fromEnvironment(env: NodeJS.ProcessEnv = process.env): ApiClient {
    const baseUrl = (env.SVC_URL || 'http://127.0.0.1:3000').replace(/\/+$/, '');
    const key = env.SVC_API_KEY;
    if (!key) throw new CliError('no API key: set SVC_API_KEY to a key with models:upload', 'usage', 2);
    return new ApiClient(baseUrl, key);
  }

  /** A call whose body and answer are the document's types for `method path`. */
  call<P extends PlainPath, M extends MethodOf<P>>(method: M, path: P, body: ApiBody<P, M>): Promise<ApiResult<P, M>> {
    return this.request<ApiResult<P, M>>(method.toUpperCase(), path, body);
  }
}
