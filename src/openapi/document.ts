import type { INestApplication, Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { Settings, SETTINGS } from '../config/settings';
import { REQUIRED_SCOPES } from '../platform/auth/auth-context';
import { handlerParameters } from '../platform/known-parameters';
import { REQUEST_EXAMPLES, RESPONSE_EXAMPLES } from './examples';
import { OPERATION_IDS, OPERATIONS, OperationNotes } from './operations';
import { OPENAPI_PATH } from './paths';
import { ref, SCHEMAS } from './schemas';


/** The name of the bearer API key security scheme. */
const API_KEY = 'ApiKey';

type Operation = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ref('ErrorEnvelope') } } });

/** The error statuses every route shares (spec part 7), as reusable responses. */
const ERROR_RESPONSES: Record<string, { status: string; description: string }> = {
  BadRequest: {
    status: '400',
    description: 'validation_failed (every problem in the message and in `errors`, each naming its field; a query parameter or body field the operation does not take is one: `Unknown parameter "tittle".`) or invalid_request; idempotency_key_reused on a POST; some operations add their own codes.',
  },
  Unauthorized: { status: '401', description: 'missing_credentials or invalid_key (malformed, unknown, revoked or expired).' },
  Forbidden: { status: '403', description: 'scope_required: the key lacks every scope this operation accepts.' },
  NotFound: { status: '404', description: 'not_found: no such resource, or it belongs to another account.' },
  Error: { status: 'default', description: 'Any other error, in the same envelope: 429 rate_limited, 503 service_unavailable (retry with backoff), 500.' },
};

/** Tags are SwaggerModule's, from the controller names; each needs a line here. */
const TAGS: Record<string, string> = {
  Me: 'The account behind the API key.',
  Models: 'Published models: search, read, publish, change, download.',
  Datasets: 'Published datasets and dataset drafts.',
  Shards: 'The files of a dataset, uploaded and downloaded one by one.',
  Uploads: 'Signed URLs to upload files straight to storage.',
  Listings: "The seller's own models and datasets, in every state.",
  Purchases: 'Checkout sessions and completed purchases.',
  Balance: "The creator's ledger and payouts.",
  Chat: 'OpenAI-compatible inference and its models.',
  Usage: 'Inference usage and cost.',
  Jobs: 'Generation jobs: a prompt drafted into an ONNX policy or a URDF robot package, then published.',
  WebhookEndpoints: 'Endpoints that receive signed event deliveries, and their delivery logs.',
  Events: 'The events webhooks send, to list and read back.',
  OpenAPI: 'This description of the API.',
};

/** Controller classes by name: SwaggerModule names operations `<Controller>_<method>`. */
function controllersByName(app: INestApplication): Map<string, Type> {
  const byName = new Map<string, Type>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      if (wrapper.metatype) byName.set(wrapper.metatype.name, wrapper.metatype as Type);
    }
  }
  return byName;
}

/** What @RequireScope put on the handler or its controller, as ApiKeyGuard reads it. */
function requiredScopes(controllers: Map<string, Type>, operationId: string): string[] {
  const [controllerName, method] = operationId.split('_');
  const controller = controllers.get(controllerName);
  if (!controller) throw new Error(`OpenAPI: no controller for operation ${operationId}`);
  return Reflect.getMetadata(REQUIRED_SCOPES, controller.prototype[method]) ?? Reflect.getMetadata(REQUIRED_SCOPES, controller) ?? [];
}

/**
 * The query parameters a handler takes (its @Query names or @QueryParameters list, which the
 * KnownParametersGuard enforces) are the ones operations.ts documents: the build fails on a
 * difference, so a filter cannot be accepted undocumented nor documented and refused.
 */
function assertQueryDocumented(controllers: Map<string, Type>, operationId: string, key: string, notes: OperationNotes): void {
  const [controllerName, method] = operationId.split('_');
  const controller = controllers.get(controllerName)!;
  const accepted = handlerParameters(controller, controller.prototype[method]).query;
  const documented = (notes.query ?? []).map((q) => q.name);
  const undocumented = accepted.filter((name) => !documented.includes(name));
  const refused = documented.filter((name) => !accepted.includes(name));
  if (undocumented.length || refused.length) {
    throw new Error(`OpenAPI: ${key} takes query parameters [${accepted.join(', ')}] but src/openapi/operations.ts documents [${documented.join(', ')}]`);
  }
}

/** OpenAPI 3.0's `nullable: true` is a type array in 3.1 (JSON Schema 2020-12). */
function toJsonSchema2020(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toJsonSchema2020);
  if (!value || typeof value !== 'object') return value;
  const { nullable, ...rest } = value as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, toJsonSchema2020(v)]));
  if (nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** Every POST takes an Idempotency-Key (issue 39; src/idempotency/idempotent-requests.ts). */
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header' as const,
  required: false,
  description:
    'Makes a retry safe (as Stripe does): the first request under a key runs and its answer is kept for at least 24 hours; ' +
    'the same request again (same path and body) answers that answer byte for byte, with `Idempotent-Replayed: true`, and changes nothing. ' +
    'Another request under the key is 400 `idempotency_key_reused` (`differs`: `path` or `body`); one sent while the first still runs is 409 ' +
    '`idempotency_key_in_use`. 5xx answers are not kept: their retry runs again. Keys are the caller’s: an account’s keys of one mode share them.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
const IDEMPOTENT_REPLAYED = { description: 'Sent on an answer replayed for an Idempotency-Key.', schema: { type: 'string', enum: ['true'] } };

const schemaName = (schema: Operation | undefined): string | undefined => /^#\/components\/schemas\/(\w+)$/.exec(schema?.$ref ?? '')?.[1];

/** A success body's example: the named schema's, or a page of one item (examples.ts). */
function composedExample(schema: Operation): unknown {
  const named = schemaName(schema);
  if (named) return RESPONSE_EXAMPLES[named];
  const item = schemaName(schema.properties?.items?.items);
  const pageFields = ['items', 'next_cursor', 'has_more'];
  if (item && RESPONSE_EXAMPLES[item] && Object.keys(schema.properties).every((field) => pageFields.includes(field))) {
    return { items: [RESPONSE_EXAMPLES[item]], next_cursor: null, has_more: false };
  }
  return undefined;
}

/** Every JSON request body and 2xx JSON answer carries an example (issue 42); the build fails on one without. */
function assertExamples(key: string, operation: Operation): void {
  const bodies = [
    ['request body', operation.requestBody?.content?.['application/json']],
    ...Object.entries(operation.responses ?? {})
      .filter(([status]) => status.startsWith('2'))
      .map(([status, response]) => [`${status} answer`, (response as Operation).content?.['application/json']]),
  ] as const;
  for (const [what, media] of bodies) {
    if (media && media.example === undefined) throw new Error(`OpenAPI: ${key} has no example for its ${what}: add one to src/openapi/examples.ts (or the operation's notes)`);
  }
}

function describeOperation(method: string, operation: Operation, scopes: string[], notes: OperationNotes): void {
  operation.summary = notes.summary;
  if (notes.description) operation.description = notes.description;

  // Scopes: any one of them suffices; an unrestricted key (no scopes) carries them all.
  operation.security = [{ [API_KEY]: scopes }];
  operation['x-required-scopes'] = scopes;
  if (scopes.length) operation.description = [operation.description, `Needs one of the scopes: ${scopes.join(', ')} (an unrestricted key has all).`].filter(Boolean).join('\n\n');

  // Handlers that parse their body themselves (`@Body() body: unknown`) name its schema in the notes.
  if (notes.body) operation.requestBody = { required: true, content: { 'application/json': { schema: notes.body } } };
  const jsonBody = operation.requestBody?.content?.['application/json'];
  if (jsonBody) jsonBody.example = notes.example ?? REQUEST_EXAMPLES[schemaName(jsonBody.schema) ?? ''];
  if (notes.bodyOptional) operation.requestBody.required = false;

  // Query parameters the handlers parse by hand replace what SwaggerModule guessed from their types.
  const params: Operation[] = (operation.parameters ?? []).filter((p: Operation) => p.in !== 'query');
  for (const q of notes.query ?? []) params.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema });
  if (method === 'post') params.push({ $ref: '#/components/parameters/IdempotencyKey' });
  operation.parameters = params;

  // The success status SwaggerModule derived from the handler (@HttpCode, 201 for POST).
  const success = notes.status ?? Object.keys(operation.responses ?? {}).find((s) => s.startsWith('2')) ?? '200';
  const content: Record<string, unknown> = {};
  if (notes.response) content['application/json'] = { schema: notes.response, example: notes.responseExample ?? composedExample(notes.response) };
  if (notes.events) content['text/event-stream'] = { schema: { type: 'string', description: notes.events } };
  const responses: Record<string, any> = {
    [success]: { description: notes.summary, ...(method === 'post' ? { headers: { 'Idempotent-Replayed': IDEMPOTENT_REPLAYED } } : {}), ...(notes.response || notes.events ? { content } : {}) },
  };
  operation.responses = responses;
  const reference = (name: string) => ({ $ref: `#/components/responses/${name}` });
  // Every operation refuses a parameter it does not take (issue 39), so every one can answer 400.
  responses['400'] = reference('BadRequest');
  responses['401'] = reference('Unauthorized');
  if (scopes.length) responses['403'] = reference('Forbidden');
  if (params.some((p) => p.in === 'path')) responses['404'] = reference('NotFound');
  for (const [status, why] of Object.entries(notes.errors ?? {})) responses[status] = errorResponse(why);
  if (method === 'post') {
    const inUse = 'idempotency_key_in_use: a request with this Idempotency-Key is still running; retry once it has answered.';
    responses['409'] = errorResponse(responses['409'] ? `${responses['409'].description} Or ${inUse}` : inUse);
  }
  responses.default = reference('Error');
}

/**
 * The public OpenAPI 3.1 document of the /v1 API, generated from the controllers: paths,
 * path parameters and body DTOs come from SwaggerModule, the body schemas from the DTOs'
 * class-validator rules, the scopes from @RequireScope; operations.ts adds what handlers
 * do not declare (summaries, hand-parsed query parameters, response shapes).
 * /admin, health, metrics and processor webhooks are left out (decisions: OpenAPI).
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Robotics marketplace and inference API')
    .setVersion('v1')
    .setDescription(
      'Publish, sell and download robotics models and datasets; OpenAI-compatible inference. ' +
        'Authenticate with `Authorization: Bearer <API_KEY>`; every error is `{ error: { code, message, request_id } }`.',
    )
    // The configured public address (PUBLIC_BASE_URL), which generated clients take as their base URL.
    .addServer(app.get<symbol, Settings>(SETTINGS, { strict: false }).publicBaseUrl, 'This service')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // package.json says UNLICENSED; SPDX spells a license it does not list LicenseRef-<name>.
  // (`identifier` is 3.1's; @nestjs/swagger's types are 3.0's.)
  document.info.license = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } as OpenAPIObject['info']['license'];
  const controllers = controllersByName(app);

  const unused = new Set(Object.keys(OPERATIONS));
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1/')) {
      delete document.paths[path];
      continue;
    }
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const notes = OPERATIONS[key];
      if (!notes) throw new Error(`OpenAPI: ${key} has no entry in src/openapi/operations.ts`);
      unused.delete(key);
      assertQueryDocumented(controllers, operation.operationId, key, notes);
      describeOperation(method, operation, notes.scopes ?? requiredScopes(controllers, operation.operationId), notes);
      assertExamples(key, operation);
      // Renamed last: the checks above find the controller by SwaggerModule's `<Controller>_<method>`.
      if (!OPERATION_IDS[key]) throw new Error(`OpenAPI: ${key} has no operationId in src/openapi/operations.ts (OPERATION_IDS)`);
      operation.operationId = OPERATION_IDS[key];
    }
  }
  for (const key of Object.keys(OPERATION_IDS)) if (!OPERATIONS[key]) unused.add(key);
  if (unused.size) throw new Error(`OpenAPI: src/openapi/operations.ts names routes that do not exist: ${[...unused].join(', ')}`);

  document.paths[OPENAPI_PATH] = {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      tags: ['OpenAPI'],
      security: [],
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document of the /v1 API.',
          content: {
            'application/json': {
              schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { type: 'string' }, info: { type: 'object' }, servers: { type: 'array' }, paths: { type: 'object' } } },
              example: { openapi: '3.1.0', info: { title: 'Robotics marketplace and inference API', version: 'v1' }, servers: [{ url: 'https://api.robots.example' }], paths: {} },
            },
          },
        },
        // Query values Postgres cannot store (NUL, lone surrogates) are refused on every route.
        '400': { $ref: '#/components/responses/BadRequest' },
        default: { $ref: '#/components/responses/Error' },
      },
    },
  };

  // Request body schemas from the DTOs' class-validator decorators, under the DTOs' names.
  // class-transformer's @Type metadata names the element class of a nested array (answers: AnswerDto[]).
  const dtoSchemas = validationMetadatasToSchemas({ refPointerPrefix: '#/components/schemas/', classTransformerMetadataStorage: defaultMetadataStorage });
  const refsIn = (value: unknown) => [...JSON.stringify(value).matchAll(/#\/components\/schemas\/(\w+)/g)].map((m) => m[1]);
  const schemas: Record<string, unknown> = { ...SCHEMAS };
  // The DTOs the paths name, and the nested DTOs those name (ClarifyJobDto's AnswerDto).
  const wanted = refsIn(document.paths);
  for (let name = wanted.shift(); name; name = wanted.shift()) {
    if (schemas[name] || !dtoSchemas[name]) continue;
    schemas[name] = dtoSchemas[name];
    wanted.push(...refsIn(dtoSchemas[name]));
  }

  document.components = {
    schemas: toJsonSchema2020(schemas) as Record<string, any>,
    responses: Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([name, r]) => [name, errorResponse(r.description)])),
    parameters: { IdempotencyKey: IDEMPOTENCY_KEY },
    securitySchemes: {
      [API_KEY]: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'svc_test_… or svc_live_… followed by 40 letters and digits',
        description: 'An API key. Operations list the scopes they accept; any one suffices, and a key with no scopes is unrestricted.',
      },
    },
  };
  document.security = [{ [API_KEY]: [] }];
  const tags = new Set(Object.values(document.paths).flatMap((item) => Object.values(item as Record<string, Operation>).flatMap((op) => op.tags ?? [])));
  const undescribed = [...tags].filter((tag) => !TAGS[tag]);
  if (undescribed.length) throw new Error(`OpenAPI: tags without a description in src/openapi/document.ts: ${undescribed.join(', ')}`);
  document.tags = Object.entries(TAGS)
    .filter(([name]) => tags.has(name))
    .map(([name, description]) => ({ name, description }));
  return document;
}
