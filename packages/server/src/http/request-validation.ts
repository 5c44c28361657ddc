// Request validation against the OpenAPI document. openapi-backend builds one parameter schema per
// operation; we compile them once, at start-up, with Ajv's JSON Schema 2020-12 dialect (the document
// is OpenAPI 3.1, and openapi-backend's own meta-schema check only knows 3.0, hence `quick`).
// Routing is the operation table's (app.ts): openapi-backend's router rebuilds its operation list
// per request, which measured several times slower than calling these precompiled validators
// directly (bench/README.md, Routing).
import { createContractAjv } from '@catalog/contract/ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { OpenAPIBackend } from 'openapi-backend';
import { InvalidRequest, PageOutOfRange } from '../catalog/errors.ts';
import { MAX_STOREFRONT_PAGES } from '../catalog/catalog-service.ts';
import type { ApiOperationId } from '@catalog/contract';
import { API_OPERATION_IDS } from './api-operations.ts';
import { openapiDocument } from '@catalog/contract/documents';


export interface ValidatedParameters {
  query: Record<string, unknown>;
  params: Record<string, unknown>;
}

export type RequestValidator = (
  operationId: ApiOperationId,
  path: Record<string, string>,
  query: Record<string, string>,
) => ValidatedParameters;

let shared: RequestValidator | undefined;

/** The validators of every API operation, compiled on first use and shared: they are pure. */
export function requestValidator(): RequestValidator {
  shared ??= createRequestValidator(API_OPERATION_IDS);
  return shared;
}

/** Builds and compiles the validators of the given operations. */
export function createRequestValidator(operationIds: readonly ApiOperationId[]): RequestValidator {
  const backend = new OpenAPIBackend({
    // openapi-backend dereferences in place; the shared document must stay intact for /openapi.json.
    definition: structuredClone(openapiDocument) as never,
    quick: true,
    validate: true,
    coerceTypes: true,
    customizeAjv: (_original, options) =>
      createContractAjv({ ...options, strict: false, allErrors: false, useDefaults: true, coerceTypes: true }) as never,
  });
  // In quick mode with an in-memory document, init() completes synchronously (it awaits nothing),
  // so the app can be built synchronously; the check below proves it did.
  backend.init().catch(() => {});
  if (!backend.initialized) throw new Error('openapi-backend did not initialise synchronously');
  const compiled = new Map<ApiOperationId, ValidateFunction[]>();
  for (const operationId of operationIds) {
    compiled.set(operationId, backend.validator.getRequestValidatorsForOperation(operationId));
  }
  const definition = backend.definition as unknown as Record<string, unknown>;
  const descriptions = parameterDescriptions(definition);
  const integers = integerQueryParameters(definition);
  return (operationId, path, query) => {
    // Ajv's coercion takes anything `==` to a number ("0x10", " 1", "1e3"); integers must be digits.
    for (const name of integers.get(operationId) ?? []) {
      const value = query[name];
      if (value !== undefined && !DECIMAL_INTEGER.test(value)) {
        throw new InvalidRequest(`Query parameter "${name}" must be an integer, got "${value.length > 60 ? `${value.slice(0, 60)}…` : value}".`);
      }
    }
    // Ajv coerces and fills defaults in place: validate a copy so error bodies echo the raw query.
    const parameters = { path: { ...path }, query: { ...query }, header: {} };
    for (const validate of compiled.get(operationId) ?? []) {
      if (!validate(parameters)) throw refusalFor(operationId, validate.errors ?? [], query, descriptions);
    }
    return { query: parameters.query, params: parameters.path };
  };
}

const DECIMAL_INTEGER = /^-?[0-9]+$/;

function integerQueryParameters(definition: Record<string, unknown>): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const item of Object.values((definition['paths'] ?? {}) as Record<string, Record<string, unknown>>)) {
    for (const operation of Object.values(item)) {
      const { operationId, parameters } = (operation ?? {}) as { operationId?: string; parameters?: unknown };
      if (typeof operationId !== 'string' || !Array.isArray(parameters)) continue;
      const names = (parameters as { name?: string; in?: string; schema?: { type?: unknown } }[])
        .filter((parameter) => parameter.in === 'query' && parameter.schema?.type === 'integer')
        .map((parameter) => String(parameter.name));
      result.set(operationId, names);
    }
  }
  return result;
}

/** `operationId in name` → the parameter's description, to explain pattern failures in words. */
function parameterDescriptions(definition: Record<string, unknown>): Map<string, string> {
  const descriptions = new Map<string, string>();
  for (const item of Object.values((definition['paths'] ?? {}) as Record<string, Record<string, unknown>>)) {
    for (const operation of Object.values(item)) {
      const { operationId, parameters } = (operation ?? {}) as { operationId?: string; parameters?: unknown };
      if (typeof operationId !== 'string' || !Array.isArray(parameters)) continue;
      for (const parameter of parameters as { name?: string; in?: string; description?: string }[]) {
        if (parameter.description !== undefined) descriptions.set(`${operationId} ${parameter.in} ${parameter.name}`, parameter.description);
      }
    }
  }
  return descriptions;
}

function refusalFor(operationId: ApiOperationId, errors: ErrorObject[], raw: Record<string, string>, descriptions: Map<string, string>): Error {
  const error = errors[0];
  if (error === undefined) return new InvalidRequest('The request is not valid.');
  const [, where = '', name = ''] = error.instancePath.split('/');
  if (operationId === 'listStorefrontProducts' && where === 'query' && name === 'page' && error.keyword === 'maximum') {
    return new PageOutOfRange(Number(raw['page']), MAX_STOREFRONT_PAGES);
  }
  const label = where === 'path' ? 'Path parameter' : where === 'header' ? 'Header' : 'Query parameter';
  if (error.keyword === 'additionalProperties') {
    const extra = String((error.params as { additionalProperty?: unknown }).additionalProperty);
    return new InvalidRequest(`${label} "${extra}" is not accepted by this operation.`);
  }
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
    return new InvalidRequest(`${label} "${missing}" is required.`);
  }
  const received = where === 'query' ? raw[name] : undefined;
  const got = received === undefined ? '' : `, got "${received.length > 60 ? `${received.slice(0, 60)}…` : received}"`;
  const description = error.keyword === 'pattern' ? descriptions.get(`${operationId} ${where} ${name}`) : undefined;
  const hint = description === undefined ? '' : ` (${description.replace(/\.$/, '')})`;
  return new InvalidRequest(`${label} "${name}" ${describe(error)}${hint}${got}.`);
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${params['type'] === 'integer' ? 'an integer' : `of type ${String(params['type'])}`}`;
    case 'enum':
      return `must be one of ${(params['allowedValues'] as unknown[]).map(String).join(', ')}`;
    case 'maxLength':
      return `must be at most ${String(params['limit'])} characters long`;
    case 'minLength':
      return `must be at least ${String(params['limit'])} character${params['limit'] === 1 ? '' : 's'} long`;
    case 'pattern':
      return `must match the pattern ${String(params['pattern'])}`;
    default:
      return error.message ?? 'is not valid';
  }
}
