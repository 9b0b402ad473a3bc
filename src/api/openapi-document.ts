/**
 * The OpenAPI 3.1 document of one database (spec §1, §5; CONTRACTS C2 "API reference"): concrete
 * paths for every generic route of every model its installed modules define — query, fetch,
 * create, update, delete, name_search, get_registry, model-info, ui-effect, the bulk routes,
 * clone, execute per API method (and action-meta per wizard) — plus the platform's model-level
 * routes (reports, files, API keys, reference shares). Schemas come from the bound fields
 * (`openapi-schemas.ts`), so the document says exactly what this database accepts.
 */
import { createRequire } from 'node:module';
import { API_KEY_PREFIX } from '../auth/api-keys.js';
import { CSRF_HEADER } from '../auth/csrf.js';
import { SESSION_COOKIE } from '../auth/cookie-names.js';
import type { ModelMeta } from '../orm/model-meta.js';
import type { Registry } from '../orm/registry.js';
import {
  inputsSchema, publicFields, recordSchema, ref, schemaNames, sharedSchemas, writeBodySchema, type JsonSchema,
} from './openapi-schemas.js';
import { DEFAULT_BULK_MAX } from './selection.js';

export interface OpenApiOptions {
  dbName: string;
  /** This server's origin as the reader reached it (`https://acme.example.com`). */
  serverUrl: string;
  /** Most records a selection or bulk call may cover (`FF_BULK_MAX`). */
  bulkMax?: number;
}

const PLATFORM_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

type Operation = Record<string, unknown>;
type PathItem = Record<string, unknown>;

const json = (schema: JsonSchema, description?: string) => ({
  ...(description ? { description } : {}),
  content: { 'application/json': { schema } },
});
const ok = (schema: JsonSchema, description = 'Success.') => ({ '200': json(schema, description) });
const body = (schema: JsonSchema, required = true) => ({ required, ...json(schema) });

/** The refusals every authenticated route may answer; each route adds what is its own. */
const COMMON_ERRORS = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '403': { $ref: '#/components/responses/Forbidden' },
  '503': { $ref: '#/components/responses/Unavailable' },
};
const WITH_NOT_FOUND = { ...COMMON_ERRORS, '404': { $ref: '#/components/responses/NotFound' } };

const idParameter = { $ref: '#/components/parameters/RecordId' };
const DOCUMENT_TYPES = ['application/pdf', 'text/html', 'application/zip'];

/** Answers of a route that may send a document instead of JSON (reports). */
function documentContent(): Record<string, { schema: JsonSchema }> {
  return Object.fromEntries(DOCUMENT_TYPES.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]));
}

function operation(model: ModelMeta, action: string, summary: string, description: string, rest: Operation): Operation {
  return { tags: [model.name], operationId: `${model.name}_${action}`, summary, description, ...rest };
}

/** The paths of one model's generic routes. */
function modelPaths(meta: ModelMeta, bulkMax: number): Record<string, PathItem> {
  const m = meta.name;
  const label = meta.verboseName;
  const record = ref(schemaNames.read(m));
  const writeAnswer = ref('WriteAnswer');
  const fieldNames = publicFields(meta).map(([name]) => name);
  const paths: Record<string, PathItem> = {
    [`/api/query/${m}`]: {
      post: operation(meta, 'query', `Search ${label} records`,
        `A page of ${label} records matching the filter, in \`order_by\` (default ${meta.orderBy.join(', ') || 'id ASC'})${meta.isArchivable ? '; archived records only when the filter names `active`' : ''}. A bare array; \`{count, data, aggregates?}\` with \`counter\` or \`footer_aggregates\`; group rows with \`group_fields\`.`, {
          requestBody: body(ref('QueryRequest'), false),
          responses: {
            ...ok({
              anyOf: [
                { type: 'array', items: record, title: 'records' },
                { type: 'array', items: ref('GroupRow'), title: 'groups' },
                {
                  type: 'object', title: 'counted',
                  properties: {
                    count: { type: 'integer', minimum: 0, description: 'Every match, not just this page.' },
                    data: { type: 'array', items: { anyOf: [record, ref('GroupRow')] } },
                    aggregates: { type: 'object', additionalProperties: { type: ['number', 'null'] } },
                  },
                  required: ['count', 'data'],
                },
              ],
            }),
            ...WITH_NOT_FOUND,
          },
        }),
    },
    [`/api/fetch/${m}/{id}`]: {
      post: operation(meta, 'fetch', `Read one ${label}`, 'One record (archived ones too) along `fields` (every public field when absent).', {
        parameters: [idParameter],
        requestBody: body({ type: 'object', properties: { fields: { type: 'array', items: { type: 'string' }, description: 'Field paths (`customer.name`).' } } }, false),
        responses: { ...ok(record), ...WITH_NOT_FOUND },
      }),
    },
    [`/api/create/${m}`]: {
      post: operation(meta, 'create', `Create a ${label}`, 'Creates one record (lines of OneToMany fields with it) and answers its id and names.', {
        requestBody: body(ref(schemaNames.create(m))),
        responses: { ...ok(writeAnswer), ...WITH_NOT_FOUND },
      }),
    },
    [`/api/update/${m}/{id}`]: {
      put: operation(meta, 'update', `Update a ${label}`, 'Changes the values given; the others stay.', {
        parameters: [idParameter],
        requestBody: body(ref(schemaNames.update(m))),
        responses: { ...ok(writeAnswer), ...WITH_NOT_FOUND },
      }),
    },
    [`/api/delete/${m}/{id}`]: {
      delete: operation(meta, 'delete', `Delete a ${label}`, 'Deletes one record (what it owns with it, as its relations say).', {
        parameters: [idParameter],
        responses: {
          ...ok({ type: 'object', properties: { id: ref('RecordId'), deleted: { const: true } }, required: ['id', 'deleted'] }),
          ...WITH_NOT_FOUND,
        },
      }),
    },
    [`/api/name_search/${m}`]: {
      post: operation(meta, 'name_search', `Find ${label} records by name`,
        `Records whose ${meta.nameSearchFields.map((f) => `\`${f}\``).join(', ') || 'name'} match \`term\`, as \`{id, display_name}\`.`, {
          requestBody: body(ref('NameSearchRequest'), false),
          responses: { ...ok({ type: 'array', items: ref('RecordLink') }), ...WITH_NOT_FOUND },
        }),
    },
    [`/api/get_registry/${m}`]: {
      get: operation(meta, 'get_registry', `Field definitions of ${label}`, 'Every public field\'s definition, labels in the caller\'s language.', {
        responses: {
          ...ok({ type: 'object', properties: Object.fromEntries(fieldNames.map((f) => [f, ref('RegistryEntry')])), additionalProperties: ref('RegistryEntry') }),
          ...WITH_NOT_FOUND,
        },
      }),
    },
    [`/api/model-info/${m}`]: {
      get: operation(meta, 'model_info', `What a client needs to know about ${label}`, 'Label, default order, API methods, wizards, reports, effect fields and the caller\'s rights.', {
        responses: { ...ok(ref('ModelInfo')), ...WITH_NOT_FOUND },
      }),
    },
    [`/api/ui-effect/${m}`]: {
      post: operation(meta, 'ui_effect', `Form effects of a ${label} field change`,
        'What changes in a form because `field_name` changed: the values that differ from `vals` once effects and computed fields ran. Writes nothing.', {
          requestBody: body({
            type: 'object',
            properties: {
              id: { ...ref('RecordId'), description: 'The saved record the form edits; absent for a new record.' },
              vals: { ...ref(schemaNames.update(m)), description: 'The form\'s values.' },
              field_name: { type: 'string', enum: fieldNames, description: 'The field that changed.' },
            },
            required: ['field_name'],
          }),
          responses: { ...ok({ type: 'object', description: 'Changed values by field name, as a fetch reads them.', additionalProperties: true }), ...WITH_NOT_FOUND },
        }),
    },
    [`/api/bulk-create/${m}`]: {
      post: operation(meta, 'bulk_create', `Create many ${label} records`,
        'One value object per record; any invalid item refuses the whole call (`detail` starts with `item <index>: `), nothing written.', {
          requestBody: body({ type: 'array', items: ref(schemaNames.create(m)), maxItems: bulkMax }),
          responses: { ...ok({ type: 'array', items: writeAnswer, description: 'In the body\'s order.' }), ...WITH_NOT_FOUND },
        }),
    },
    [`/api/bulk-update/${m}`]: {
      put: operation(meta, 'bulk_update', `Update many ${label} records`,
        'Each record its own values (`[{id, …values}]`), or the same values for a selection (`{selection, vals}`).', {
          requestBody: body({
            oneOf: [
              {
                type: 'array', title: 'per record', maxItems: bulkMax,
                items: { allOf: [ref(schemaNames.update(m)), { type: 'object', properties: { id: ref('RecordId') }, required: ['id'] }] },
              },
              {
                type: 'object', title: 'selection',
                properties: { selection: ref('SelectionObject'), vals: ref(schemaNames.update(m)) },
                required: ['selection', 'vals'],
                additionalProperties: false,
              },
            ],
          }),
          responses: { ...ok(ref('BulkUpdated')), ...WITH_NOT_FOUND },
        }),
    },
    [`/api/bulk-delete/${m}`]: {
      delete: operation(meta, 'bulk_delete', `Delete many ${label} records`, 'A bare array of ids, or a selection object.', {
        requestBody: body({ oneOf: [{ type: 'array', title: 'ids', items: ref('RecordId'), maxItems: bulkMax }, ref('SelectionObject')] }),
        responses: { ...ok(ref('BulkDeleted')), ...WITH_NOT_FOUND },
      }),
    },
    [`/api/clone/${m}`]: {
      post: operation(meta, 'clone', `Duplicate ${label} records`,
        'A copy of every record the selection matches (their owned lines with them), in the selection\'s order.', {
          requestBody: body(ref('SelectionObject')),
          responses: { ...ok({ type: 'array', items: writeAnswer }), ...WITH_NOT_FOUND },
        }),
    },
  };
  for (const method of [...meta.apiMethods].sort()) {
    const wizard = meta.wizards.get(method);
    const inputs = wizard ? ref(schemaNames.inputs(m, method)) : { type: 'object', description: 'The method\'s parameters.' };
    paths[`/api/execute/${m}/${method}`] = {
      post: operation(meta, `execute_${method}`, wizard ? `${wizard.title} (${method})` : `Run ${method}`,
        `Calls \`${m}.${method}\`: once per record of \`ids\` or \`selection\` (the result an array in their order; always an array with a selection), or once without records for a model-level method. ${wizard ? `Its inputs are the "${wizard.title}" wizard's (\`request_body.inputs\`), checked before it runs. ` : ''}A method answering a report action sends the document instead of JSON.`, {
          requestBody: body({
            type: 'object',
            properties: {
              ids: { type: 'array', items: ref('RecordId'), maxItems: bulkMax },
              selection: ref('SelectionObject'),
              request_body: {
                type: 'object',
                properties: {
                  inputs,
                  context: { type: 'object', description: 'Passed to the method (`active_ids`, `active_model` added); `lang` sets the language of its messages.' },
                },
              },
            },
          }, false),
          responses: {
            '200': {
              description: 'The method\'s result, or the document of a report action.',
              headers: {
                'X-Action-Close': { description: 'Present (`1`) when the result asks the triggering dialog to close.', schema: { type: 'string', const: '1' } },
                'X-Action-Reload': { description: 'Present (`1`) when the result asks the view behind to refetch.', schema: { type: 'string', const: '1' } },
              },
              content: { 'application/json': { schema: ref('ExecuteAnswer') }, ...documentContent() },
            },
            ...WITH_NOT_FOUND,
          },
        }),
    };
    if (wizard) {
      paths[`/api/action-meta/${m}/${method}`] = {
        post: operation(meta, `action_meta_${method}`, `The "${wizard.title}" dialog`,
          'The wizard\'s inputs (registry entries), layout and defaults for the given context.', {
            requestBody: body({ type: 'object', properties: { context: { type: 'object', properties: { active_ids: { type: 'array', items: ref('RecordId') } } } } }, false),
            responses: { ...ok(ref('WizardMeta')), ...WITH_NOT_FOUND },
          }),
      };
    }
  }
  return paths;
}

/** The platform's routes that are not per model but concern models (reports, files, keys, shares). */
function platformPaths(registry: Registry, bulkMax: number): Record<string, PathItem> {
  const tags = ['Platform'];
  const printable = [...registry.models.keys()].sort();
  const paths: Record<string, PathItem> = {
    '/api/generate_report': {
      post: {
        tags, operationId: 'generate_report', summary: 'Print a report',
        description: 'One matching record → the document itself; several → a ZIP of one document per record.',
        requestBody: body({
          type: 'object',
          properties: {
            model: { type: 'string', enum: printable },
            report_id: { type: 'string', description: 'The report\'s identifier, e.g. `sales.report_sale_order`.' },
            instance_ids: { type: 'array', items: ref('RecordId'), maxItems: bulkMax },
            selection: ref('SelectionObject'),
            context: { type: 'object', properties: { lang: { type: 'string' } } },
          },
          required: ['model', 'report_id'],
        }),
        responses: { '200': { description: 'The document (or a ZIP of them).', content: documentContent() }, ...WITH_NOT_FOUND },
      },
    },
    '/api/files/{id}/url': {
      get: {
        tags, operationId: 'file_url', summary: 'A download address for an attachment',
        parameters: [idParameter],
        responses: { ...ok({ type: 'object', properties: { url: { type: 'string' } }, required: ['url'] }), ...WITH_NOT_FOUND },
      },
    },
  };
  if (registry.has('ApiKey')) {
    paths['/api/api-keys'] = {
      post: {
        tags, operationId: 'api_keys_create', summary: 'Create an API key (shown once)',
        requestBody: body({
          type: 'object',
          properties: {
            name: { type: 'string' },
            groups: { type: 'array', items: { type: 'string' }, description: 'Group identifiers of a new service account.' },
            service_account: { ...ref('RecordId'), description: 'An existing account, to rotate its key.' },
            expires_at: { type: ['string', 'null'], format: 'date-time' },
            scopes: { type: ['array', 'null'], items: { type: 'object', properties: { model: { type: 'string' }, perms: { type: 'array', items: { type: 'string', enum: ['read', 'write', 'create', 'delete'] } } } } },
          },
          required: ['name'],
          additionalProperties: false,
        }),
        responses: {
          ...ok({
            type: 'object',
            properties: { id: ref('RecordId'), key: { type: 'string' }, prefix: { type: 'string' }, service_account: ref('RecordId'), expires_at: { type: ['string', 'null'], format: 'date-time' } },
            required: ['id', 'key', 'prefix', 'service_account', 'expires_at'],
          }),
          ...WITH_NOT_FOUND,
        },
      },
      get: { tags, operationId: 'api_keys_list', summary: 'List API keys (never a key)', responses: { ...ok({ type: 'array', items: { type: 'object' } }), ...COMMON_ERRORS } },
    };
    paths['/api/api-keys/{id}'] = {
      delete: {
        tags, operationId: 'api_keys_revoke', summary: 'Revoke an API key', parameters: [idParameter],
        responses: { ...ok(ref('Revoked')), ...WITH_NOT_FOUND },
      },
    };
  }
  if (registry.has('ApiDocsShare')) {
    paths['/api/api-docs-shares'] = {
      post: {
        tags, operationId: 'api_docs_shares_create', summary: 'Share this API reference (link shown once)',
        requestBody: body({
          type: 'object',
          properties: { name: { type: 'string', maxLength: 255 }, expires_at: { type: ['string', 'null'], format: 'date-time', description: 'In the future; none = never expires.' } },
          required: ['name'],
          additionalProperties: false,
        }),
        responses: {
          ...ok({
            type: 'object',
            properties: {
              id: ref('RecordId'), name: { type: 'string' }, token: { type: 'string' },
              url: { type: 'string', format: 'uri', description: 'The absolute `/api-docs?token=…` address on this server.' },
              expires_at: { type: ['string', 'null'], format: 'date-time' },
            },
            required: ['id', 'name', 'token', 'url', 'expires_at'],
          }),
          ...COMMON_ERRORS,
        },
      },
      get: {
        tags, operationId: 'api_docs_shares_list', summary: 'List reference shares (never a token)',
        responses: {
          ...ok({
            type: 'array',
            items: {
              type: 'object',
              properties: {
                id: ref('RecordId'), name: { type: 'string' }, expires_at: { type: ['string', 'null'], format: 'date-time' }, active: { type: 'boolean' },
                last_used_at: { type: ['string', 'null'], format: 'date-time' }, created_date: { type: 'string', format: 'date-time' },
                created_by: { anyOf: [ref('RecordLink'), { type: 'null' }] },
              },
              required: ['id', 'name', 'expires_at', 'active', 'last_used_at', 'created_date', 'created_by'],
            },
          }),
          ...COMMON_ERRORS,
        },
      },
    };
    paths['/api/api-docs-shares/{id}'] = {
      delete: {
        tags, operationId: 'api_docs_shares_revoke', summary: 'Revoke a reference share (its cookies too, at once)', parameters: [idParameter],
        responses: { ...ok(ref('Revoked')), ...WITH_NOT_FOUND },
      },
    };
  }
  return paths;
}

function errorResponse(description: string, extra: Record<string, unknown> = {}) {
  return { description, ...extra, content: { 'application/json': { schema: ref('ErrorBody') } } };
}

/** Schemas of answers that are the same for every model. */
function answerSchemas(): Record<string, JsonSchema> {
  return {
    GroupRow: {
      type: 'object',
      description: 'One group of a grouped query: the grouped fields\' values (a relation as `{id, display_name}`), the record count and the sums asked for.',
      properties: { count: { type: 'integer', minimum: 0 }, aggregates: { type: 'object', additionalProperties: { type: ['number', 'null'] } } },
      required: ['count', 'aggregates'],
    },
    BulkUpdated: { type: 'object', properties: { updated: { type: 'integer', minimum: 0 }, ids: { type: 'array', items: ref('RecordId') } }, required: ['updated', 'ids'] },
    BulkDeleted: { type: 'object', properties: { deleted: { type: 'integer', minimum: 0 }, ids: { type: 'array', items: ref('RecordId') } }, required: ['deleted', 'ids'] },
    Revoked: { type: 'object', properties: { id: ref('RecordId'), revoked: { const: true } }, required: ['id', 'revoked'] },
    ModelInfo: {
      type: 'object',
      properties: {
        model: { type: 'string' }, label: { type: 'string' }, order_by: { type: 'array', items: { type: 'string' } },
        archivable: { type: 'boolean' }, rec_name: { type: ['string', 'null'] }, api_methods: { type: 'array', items: { type: 'string' } },
        wizards: { type: 'array', items: { type: 'object', properties: { method: { type: 'string' }, title: { type: 'string' } }, required: ['method', 'title'] } },
        reports: {
          type: 'array',
          items: { type: 'object', properties: { id: ref('RecordId'), identifier: { type: ['string', 'null'] }, name: { type: 'string' }, format: { type: 'string' } }, required: ['id', 'identifier', 'name', 'format'] },
        },
        effect_fields: { type: 'array', items: { type: 'string' } },
        create: { type: 'boolean' }, write: { type: 'boolean' }, unlink: { type: 'boolean' },
      },
      required: ['model', 'label', 'order_by', 'archivable', 'rec_name', 'api_methods', 'wizards', 'reports', 'effect_fields', 'create', 'write', 'unlink'],
    },
    WizardMeta: {
      type: 'object',
      properties: {
        model: { type: 'string' }, method: { type: 'string' }, title: { type: 'string' },
        fields: { type: 'object', additionalProperties: ref('RegistryEntry') },
        arch: { type: 'array', description: 'Layout nodes: `{field: {name}}`, `{row: [nodes]}`, `{column: {span, children}}`.' },
        defaults: { type: 'object', description: 'Input values to start from (links as `{id, display_name}`).' },
      },
      required: ['model', 'method', 'title', 'fields', 'arch', 'defaults'],
    },
  };
}

function description(registry: Registry, dbName: string, bulkMax: number): string {
  return [
    `The HTTP API of database \`${dbName}\`, generated from the modules installed in it (${registry.modules.map((m) => `\`${m}\``).join(', ')}).`,
    '',
    // The key's prefix from where keys are made, so the text cannot drift from the keys again.
    `**Authentication.** An API key (\`Authorization: Bearer ${API_KEY_PREFIX}…\`, created in Settings › General › API Keys; it acts as its service account), or a session access token as Bearer. A browser session cookie works too; then every request but a read needs the \`X-CSRF-Token\` header. Without a valid credential: 401.`,
    '',
    '**Database.** The `X-DB-NAME` header, else the first label of the host name, else the only database.',
    '',
    `**Errors.** Every refusal answers \`{detail, error}\` (schema \`ErrorBody\`) with its status: 400 invalid input, 401 no valid credential, 403 no right, 404 unknown model, record or method (a record the caller may not see is a 404), 413 body too large, 503 while modules install (\`Retry-After\`). Rights, record rules and company isolation apply to every route.`,
    '',
    `**Selections.** Bulk routes, clone, execute and reports take a selection object (schema \`SelectionObject\`): explicit \`ids\` or a filter; at most ${bulkMax} records per call.`,
    '',
    '**Writes.** Keys that are not settable are ignored, never an error; a relation is written as an id, lines (OneToMany) as objects or ids.',
  ].join('\n');
}

/** `X-DB-NAME`, inline in every operation (Swagger UI's "Try it out" fills it in). */
function databaseParameter(dbName: string): Record<string, unknown> {
  return {
    name: 'X-DB-NAME', in: 'header', required: false,
    description: 'The database; needed only when the host name does not name it and several exist.',
    schema: { type: 'string', default: dbName },
  };
}

/** The OpenAPI 3.1 document of the database whose registry is `registry`. */
export function openApiDocument(registry: Registry, options: OpenApiOptions): Record<string, unknown> {
  const bulkMax = options.bulkMax ?? DEFAULT_BULK_MAX;
  const models = [...registry.models.values()].sort((a, b) => a.name.localeCompare(b.name));
  const schemas: Record<string, JsonSchema> = { ...sharedSchemas(bulkMax), ...answerSchemas() };
  const paths: Record<string, PathItem> = {};
  for (const meta of models) {
    schemas[schemaNames.read(meta.name)] = recordSchema(meta);
    schemas[schemaNames.create(meta.name)] = writeBodySchema(meta, 'create');
    schemas[schemaNames.update(meta.name)] = writeBodySchema(meta, 'update');
    for (const wizard of meta.wizards.values()) schemas[schemaNames.inputs(meta.name, wizard.method)] = inputsSchema(wizard.title, wizard.fields);
    Object.assign(paths, modelPaths(meta, bulkMax));
  }
  Object.assign(paths, platformPaths(registry, bulkMax));
  // "Try it out" then names this database even on a server holding several.
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item) as Operation[]) op.parameters = [...((op.parameters as unknown[] | undefined) ?? []), databaseParameter(options.dbName)];
  }
  const byModule = new Map<string, string[]>();
  for (const meta of models) byModule.set(meta.module, [...(byModule.get(meta.module) ?? []), meta.name]);
  return {
    openapi: '3.1.0',
    info: {
      title: `FieldForge API · ${options.dbName}`,
      version: PLATFORM_VERSION,
      description: description(registry, options.dbName, bulkMax),
    },
    servers: [{ url: options.serverUrl, description: `This server (database \`${options.dbName}\`).` }],
    security: [{ bearer: [] }, { sessionCookie: [], csrfToken: [] }],
    tags: [
      ...models.map((meta) => ({ name: meta.name, description: `${meta.verboseName} (module \`${meta.module}\`)` })),
      { name: 'Platform', description: 'Reports, files, API keys and reference shares.' },
    ],
    'x-tagGroups': [
      ...[...byModule].map(([module, names]) => ({ name: `Module ${module}`, tags: names })),
      { name: 'Platform', tags: ['Platform'] },
    ],
    paths,
    components: {
      schemas,
      parameters: {
        RecordId: { name: 'id', in: 'path', required: true, description: 'The record id.', schema: ref('RecordId') },
      },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: `An API key (\`${API_KEY_PREFIX}…\`) or a session access token.` },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'The web client\'s session cookie.' },
        csrfToken: { type: 'apiKey', in: 'header', name: CSRF_HEADER, description: 'With the session cookie, on every request but a read.' },
      },
      responses: {
        BadRequest: errorResponse('Invalid input: the detail names the field or item.'),
        Unauthorized: errorResponse('No valid credential.'),
        Forbidden: errorResponse('The caller has no right to do this.'),
        NotFound: errorResponse('Unknown model, record or method — or a record the caller may not see.'),
        Unavailable: errorResponse('Modules are being installed or upgraded, or the database is busy: retry.', {
          headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
        }),
      },
    },
  };
}
