/**
 * JSON Schemas (OpenAPI 3.1 dialect) of what goes over the wire for a model: its record as read,
 * its values as written on create and on update, a wizard's inputs, and the schemas every route
 * shares (error body, selection object, record link, registry entry). Derived from the bound
 * fields, the same declarations the ORM validates with, so the reference never drifts from them.
 */
import type { Field, RegistryEntry } from '../orm/fields/field.js';
import { OneToManyField, RelationalField } from '../orm/fields/relational-fields.js';
import { INT32_MAX } from '../orm/fields/scalar-fields.js';
import { CREATE_ONLY_KEYS } from '../orm/generic-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';

/** A JSON Schema object (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type JsonSchema = Record<string, unknown>;

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** Component names of a model's schemas: `SaleOrder`, `SaleOrder.Create`, `SaleOrder.Update`. */
export const schemaNames = {
  read: (model: string) => model,
  create: (model: string) => `${model}.Create`,
  update: (model: string) => `${model}.Update`,
  inputs: (model: string, method: string) => `${model}.${method}.Inputs`,
};

const nullable = (schema: JsonSchema): JsonSchema => {
  const type = schema.type;
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
};

/** What every field schema says about its declaration: label, description, FieldForge type. */
function annotations(field: Field): JsonSchema {
  const entry = field.describe();
  const out: JsonSchema = { title: entry.label, 'x-field-type': entry.type };
  if (entry.description) out.description = entry.description;
  if (entry.related_model) out['x-related-model'] = entry.related_model;
  if (entry.currency_field) out['x-currency-field'] = entry.currency_field;
  if (entry.precision !== undefined) out['x-precision'] = entry.precision;
  if (entry.visible_setting) out['x-visible-setting'] = entry.visible_setting;
  return out;
}

function choicesOf(entry: RegistryEntry): JsonSchema {
  const values = (entry.choices ?? []).map(([value]) => value);
  const listed = (entry.choices ?? []).map(([value, label]) => (value === label ? `\`${value}\`` : `\`${value}\` (${label})`)).join(', ');
  return { type: ['string', 'null'], enum: [...values, null], 'x-choices': entry.choices ?? [], description: `One of ${listed}.` };
}

/** The value of one field as a read answers it. */
export function readSchema(field: Field): JsonSchema {
  const entry = field.describe();
  const base = annotations(field);
  let schema: JsonSchema;
  switch (entry.type) {
    case 'Char': schema = { type: ['string', 'null'], maxLength: entry.max_length }; break;
    case 'Text': schema = { type: ['string', 'null'] }; break;
    case 'Boolean': schema = { type: ['boolean', 'null'] }; break;
    case 'Integer': schema = { type: ['integer', 'null'], minimum: -INT32_MAX, maximum: INT32_MAX }; break;
    case 'Float': case 'Monetary': schema = { type: ['number', 'null'] }; break;
    case 'Date': schema = { type: ['string', 'null'], format: 'date' }; break;
    case 'Datetime': schema = { type: ['string', 'null'], format: 'date-time' }; break;
    case 'Selection': schema = choicesOf(entry); break;
    case 'ManyToOne': schema = nullable(ref('RecordLink')); break;
    case 'OneToMany': case 'ManyToMany': schema = { type: 'array', items: ref('RecordLink') }; break;
    case 'File': schema = { type: ['integer', 'null'], minimum: 1, description: 'The Attachment id holding the file (download it through /api/files/{id}/url).' }; break;
    case 'Binary': schema = { type: ['string', 'null'], contentEncoding: 'base64' }; break;
    default: schema = { description: 'Any JSON value.' }; // Json
  }
  if (field.name === 'id') schema = { type: 'integer', minimum: 1, maximum: INT32_MAX };
  const out: JsonSchema = { ...base, ...schema };
  if (entry.description && schema.description) out.description = `${entry.description} ${schema.description as string}`;
  if (!field.isSettable) out.readOnly = true;
  return out;
}

/** The value of one field as a create or update body (or a wizard's inputs) gives it. */
export function writeSchema(field: Field): JsonSchema {
  const entry = field.describe();
  const base = annotations(field);
  let schema: JsonSchema;
  switch (entry.type) {
    case 'Char': schema = { type: ['string', 'null'], maxLength: entry.max_length }; break;
    case 'Text': schema = { type: ['string', 'null'] }; break;
    case 'Boolean': schema = { type: ['boolean', 'null'] }; break;
    case 'Integer': schema = { type: ['integer', 'null'], minimum: -INT32_MAX, maximum: INT32_MAX }; break;
    case 'Float': schema = { type: ['number', 'null'] }; break;
    case 'Monetary':
      schema = { type: ['number', 'string', 'null'], pattern: '^-?\\d+(\\.\\d+)?$', maxLength: 64, description: 'A number, or an exact decimal string such as "12.50".' };
      break;
    case 'Date': schema = { type: ['string', 'null'], format: 'date' }; break;
    case 'Datetime': schema = { type: ['string', 'null'], format: 'date-time', description: 'ISO 8601; without an offset the value is UTC.' }; break;
    case 'Selection': schema = choicesOf(entry); break;
    case 'ManyToOne': schema = nullable(ref('RecordId')); break;
    case 'ManyToMany': schema = { type: 'array', items: ref('RecordId'), description: 'The ids replace the set of linked records.' }; break;
    case 'OneToMany': {
      const target = (field as OneToManyField).targetName;
      schema = {
        type: 'array',
        items: { anyOf: [ref('RecordId'), ref(schemaNames.update(target))] },
        description: 'Lines: an object is created (or updated when it carries its `id`), an id is kept or linked; on update, lines left out are removed.',
      };
      break;
    }
    case 'File': schema = { anyOf: [ref('RecordId'), ref('FileUpload'), { type: 'null' }], description: 'An Attachment id, or an upload that becomes one.' }; break;
    case 'Binary': schema = { type: ['string', 'null'], contentEncoding: 'base64' }; break;
    default: schema = { description: 'Any JSON value.' }; // Json
  }
  const out: JsonSchema = { ...base, ...schema };
  if (entry.description && schema.description) out.description = `${entry.description} ${schema.description as string}`;
  if (entry.default !== undefined && entry.default !== null) out.default = entry.default;
  return out;
}

/** Fields a client sees: everything but the internal ones (hashes). */
export function publicFields(meta: ModelMeta): [string, Field][] {
  return [...meta.fields].filter(([, f]) => !f.options.internal);
}

/** A record as read: every public field; `id` is always there, the others when asked for. */
export function recordSchema(meta: ModelMeta): JsonSchema {
  const properties = Object.fromEntries(publicFields(meta).map(([name, f]) => [name, readSchema(f)]));
  return {
    type: 'object',
    title: meta.verboseName,
    description: `A ${meta.verboseName} record (module \`${meta.module}\`) as read: \`id\` and \`display_name\`, plus the fields asked for. A relation reads as \`{id, display_name}\` (more keys with nested paths such as \`customer.name\`).`,
    properties,
    required: ['id'],
  };
}

/** Fields a create (`mode` create) or update body may set; other keys are ignored (spec §4.4). */
function settable(meta: ModelMeta, mode: 'create' | 'update'): [string, Field][] {
  return publicFields(meta).filter(([name, f]) => f.isSettable || (mode === 'create' && CREATE_ONLY_KEYS.has(name)))
    .filter(([name]) => !(mode === 'update' && CREATE_ONLY_KEYS.has(name)));
}

/** A field a create must name: required, settable, without default. */
function mustGive(field: Field): boolean {
  return field.isRequired && field.isSettable && field.options.default === undefined && !field.isComputed;
}

export function writeBodySchema(meta: ModelMeta, mode: 'create' | 'update'): JsonSchema {
  const fields = settable(meta, mode);
  const schema: JsonSchema = {
    type: 'object',
    title: `${meta.verboseName} (${mode})`,
    description: mode === 'create'
      ? `Values of a new ${meta.verboseName}. Keys that are not settable (computed, read-only, unknown) are ignored, never an error; \`identifier\` and \`created_date\` are honoured (data migration).`
      : `Values to change. Keys that are not settable are ignored, as are \`id\`, \`identifier\` and the audit columns.`,
    properties: Object.fromEntries(fields.map(([name, f]) => [name, writeSchema(f)])),
  };
  const required = mode === 'create' ? fields.filter(([, f]) => mustGive(f)).map(([name]) => name) : [];
  if (required.length) schema.required = required;
  return schema;
}

/** A wizard's inputs (`request_body.inputs` of its method). */
export function inputsSchema(title: string, fields: ReadonlyMap<string, Field>): JsonSchema {
  const schema: JsonSchema = {
    type: 'object',
    title,
    description: `The values of the "${title}" dialog, checked against these fields before the method runs (400 naming the field otherwise).`,
    properties: Object.fromEntries([...fields].map(([name, f]) => [name, writeSchema(f)])),
  };
  const required = [...fields].filter(([, f]) => f.isRequired).map(([name]) => name);
  if (required.length) schema.required = required;
  return schema;
}

const FIELD_TYPES = ['Char', 'Text', 'Boolean', 'Integer', 'Float', 'Monetary', 'Date', 'Datetime', 'Selection',
  'ManyToOne', 'OneToMany', 'ManyToMany', 'File', 'Binary', 'Json'];

const idList = (description: string): JsonSchema => ({ type: 'array', items: ref('RecordId'), description });

/** The schemas every model's routes share. */
export function sharedSchemas(bulkMax: number): Record<string, JsonSchema> {
  return {
    ErrorBody: {
      type: 'object',
      description: 'Every refusal (spec §7): a message and the error type; `traceback` only on a server in development mode.',
      properties: {
        detail: { type: 'string', description: 'What went wrong, for people.' },
        error: {
          type: 'string',
          description: 'The error type, for programs.',
          examples: ['BadRequest', 'ValidationError', 'UserError', 'QuerySyntaxError', 'AuthenticationError', 'AccessError', 'NotFound', 'DatabaseBusy'],
        },
        traceback: { type: 'string' },
      },
      required: ['detail', 'error'],
    },
    RecordId: { type: 'integer', minimum: 1, maximum: INT32_MAX, description: 'A record id.' },
    RecordLink: {
      type: 'object',
      description: 'A related record as read: its id and display name (more keys when nested paths ask for them).',
      properties: { id: ref('RecordId'), display_name: { type: ['string', 'null'] } },
      required: ['id'],
    },
    SelectionObject: {
      description: `Which records a bulk call, clone, execute or report applies to (spec §4.5): explicit \`ids\`, or a filter (\`filter_str\`, \`name_search\`, minus \`exclude_ids\`). \`ids\` together with a filter is a 400, and so is a selection naming nothing: \`filter_str: ""\` means every record the caller can see, explicitly. A filter is resolved like a query (archived records out unless it names \`active\`; rules and companies apply); ids the caller cannot see are a 404 for the whole call. At most ${bulkMax} records (FF_BULK_MAX).`,
      oneOf: [
        {
          title: 'ids',
          type: 'object',
          properties: { ids: { ...idList('Explicit record ids, in the order the call runs on them.'), minItems: 1 } },
          required: ['ids'],
          additionalProperties: false,
        },
        {
          title: 'filter',
          type: 'object',
          properties: {
            filter_str: { type: 'string', description: 'A Q-expression, e.g. `Q(state=\'draft\') & Q(amount_total__gt=100)`.' },
            name_search: { type: 'array', items: { type: 'string' }, description: 'Search terms, ANDed.' },
            exclude_ids: idList('Records removed from the match.'),
          },
          anyOf: [{ required: ['filter_str'] }, { required: ['name_search'] }],
          additionalProperties: false,
        },
      ],
    },
    WriteAnswer: {
      type: 'object',
      properties: { id: ref('RecordId'), name: { description: 'The record\'s `name` field, or its display name.' }, display_name: { type: ['string', 'null'] } },
      required: ['id', 'name', 'display_name'],
    },
    FileUpload: {
      type: 'object',
      description: 'A file given inline; it becomes an Attachment owned by the record.',
      properties: {
        name: { type: 'string', description: 'The file name.' },
        base64: { type: 'string', contentEncoding: 'base64', description: 'The bytes, base64 (a `data:` URL is accepted).' },
        mimetype: { type: 'string' },
        is_public: { type: 'boolean' },
      },
      required: ['name', 'base64'],
    },
    RegistryEntry: {
      type: 'object',
      description: 'A field definition (spec §2.1 rule 2).',
      properties: {
        type: { type: 'string', enum: FIELD_TYPES },
        label: { type: 'string', description: 'In the caller\'s language.' },
        required: { type: 'boolean' },
        readonly: { type: 'boolean' },
        max_length: { type: 'integer' },
        default: {},
        related_model: { type: 'string' },
        related_name: { type: 'string' },
        choices: { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 }, description: '`[value, label]` pairs.' },
        precision: { type: 'integer' },
        description: { type: 'string' },
        store: { type: 'boolean' },
        computed: { type: 'boolean' },
        on_delete: { type: 'string', enum: ['CASCADE', 'SET NULL', 'RESTRICT'] },
        currency_field: { type: 'string' },
        visible_setting: { type: 'string' },
        visible_setting_holds: { type: 'boolean' },
        filter: { type: 'string' },
        index: { type: 'boolean' },
      },
      required: ['type', 'label'],
    },
    QueryRequest: {
      type: 'object',
      properties: {
        fields: { type: 'array', items: { type: 'string' }, description: 'Field paths; nested paths drill into relations (`customer.name`).' },
        filter_str: { type: 'string', description: 'A Q-expression, e.g. `Q(name__ilike=\'acme\') & Q(active__in=[True, False])`.' },
        order_by: { type: 'array', items: { type: 'string', pattern: '^\\S+( +(ASC|DESC))?$', examples: ['id DESC'] }, description: '`<field> ASC` or `<field> DESC`.' },
        limit: { type: 'integer', minimum: 1, maximum: 2000, default: 80 },
        page: { type: 'integer', minimum: 1, default: 1 },
        group_fields: { type: 'array', items: { type: 'string' }, description: 'Group the matches by these fields (the answer lists groups with counts).' },
        name_search: { type: 'array', items: { type: 'string' }, description: 'Search terms, ANDed.' },
        counter: { type: 'boolean', description: 'Answer `{count, data}`, the count covering every match.' },
        footer_aggregates: { type: 'array', items: { type: 'string' }, description: 'Numeric fields summed over every match (answer `{count, data, aggregates}`).' },
      },
    },
    NameSearchRequest: {
      type: 'object',
      properties: {
        term: { type: 'string' },
        limit: { type: 'integer', minimum: 1, maximum: 2000, default: 8 },
        filter: { type: 'string', description: 'A Q-expression narrowing the candidates.' },
      },
    },
    ExecuteAnswer: {
      type: 'object',
      properties: {
        message: { type: 'string' },
        result: { description: 'The method\'s return value: one value for one id (or a model-level call), an array in the records\' order otherwise (always with a selection).' },
      },
      required: ['message', 'result'],
    },
  };
}
