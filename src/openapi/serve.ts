import { INestApplication, Logger } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sendError } from '../platform/error-filter';
import { Errors } from '../platform/errors';
import { assertKnownQuery } from '../platform/known-parameters';
import { buildOpenApiDocument } from './document';
import { DOCS_PATH, OPENAPI_PATH } from './paths';

/** Swagger UI's own files, served from node_modules: the page works offline, with no CDN. */
const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>API reference</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

/** A separate file rather than an inline script, so a strict Content-Security-Policy can be added later. */
const init = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  presets: [SwaggerUIBundle.presets.apis],
});
`;

/**
 * GET /v1/openapi.json (the document, built on first request and kept: the routes do not
 * change while the app runs) and GET /docs (Swagger UI reading it). Neither takes a key.
 */
export function serveOpenApi(app: INestApplication): void {
  let document: string | undefined;
  const logger = new Logger('OpenAPI');
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  void fastify.register(async (scope: FastifyInstance) => {
    scope.setErrorHandler((error, request, reply) => sendError(request, reply, error, logger));
    scope.get(OPENAPI_PATH, async (request, reply) => {
      // A /v1 operation like the others: it takes no parameter (issue 39).
      assertKnownQuery(request.query, []);
      document ??= JSON.stringify(buildOpenApiDocument(app));
      return reply.type('application/json; charset=utf-8').send(document);
    });
    scope.get(DOCS_PATH, async (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
    scope.get(`${DOCS_PATH}/init.js`, async (_request, reply) => reply.type('application/javascript; charset=utf-8').send(init));
    scope.get(`${DOCS_PATH}/:asset`, async (request, reply) => {
      const asset = (request.params as { asset: string }).asset;
      const type = Object.hasOwn(ASSETS, asset) ? ASSETS[asset] : undefined;
      if (!type) throw Errors.notFound('file');
      return reply.type(type).header('cache-control', 'public, max-age=3600').send(fs.createReadStream(path.join(SWAGGER_UI, asset)));
    });
  });
}
