/** Served without a key: the onRequest hook in platform/http.ts lets these through. */
export const OPENAPI_PATH = '/v1/openapi.json';
export const DOCS_PATH = '/docs';
