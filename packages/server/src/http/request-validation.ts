// Request validation against the OpenAPI document, for every operation of both listeners: path,
// query and header parameters. openapi-backend builds one parameter schema per operation; we
// compile them once, at start-up, with Ajv's JSON Schema 2020-12 dialect (the document is OpenAPI
// 3.1, and openapi-backend's own meta-schema check only knows 3.0, hence `quick`). Routing is
// Express's, built from the operation table (operation-routes.ts): openapi-backend's router
// rebuilds its operation list per request (bench/README.md, Routing).
//
// A refusal names the first problem, headers before path before query (a request for the wrong
// thing is told so before it is told about its details), with the code the parameter's
// `x-error-code` names in the contract, `invalid_request` otherwise.
import { createContractAjv } from '@catalog/contract/ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { OpenAPIBackend } from 'openapi-backend';
import type { IncomingHttpHeaders } from 'node:http';
import { CatalogError, InvalidRequest, PageOutOfRange, type ErrorCode } from '../catalog/errors.ts';
import { MAX_STOREFRONT_PAGES } from '../catalog/catalog-service.ts';
import { truncate } from './query-string.ts';
import { operations, type OperationId } from '@catalog/contract';
import { openapiDocument } from '@catalog/contract/documents';

export interface ValidatedParameters {
  query: Record<string, unknown>;
  params: Record<string, unknown>;
  /** The operation's header parameters that were sent, by their names in the contract. */
  headers: Record<string, string>;
}

export type RequestValidator = (
  operationId: OperationId,
  path: Record<string, string>,
  query: Record<string, string>,
  headers: IncomingHttpHeaders,
) => ValidatedParameters;

let shared: RequestValidator | undefined;

/** The validators of every operation, compiled on first use and shared: they are pure. */
export function requestValidator(): RequestValidator {
  shared ??= createRequestValidator(Object.keys(operations) as OperationId[]);
  return shared;
}

/** The order in which refusals are reported when a request has several problems. */
const LOCATION_ORDER = ['header', 'path', 'query'];

/** Builds and compiles the validators of the given operations. */
export function createRequestValidator(operationIds: readonly OperationId[]): RequestValidator {
  const backend = new OpenAPIBackend({
    // openapi-backend dereferences in place; the shared document must stay intact for /openapi.json.
    definition: structuredClone(openapiDocument) as never,
    quick: true,
    validate: true,
    coerceTypes: true,
    // allErrors, so that the refusal can name the first problem in LOCATION_ORDER; a valid
    // request runs every check either way.
    customizeAjv: (_original, options) =>
      createContractAjv({ ...options, strict: false, allErrors: true, useDefaults: true, coerceTypes: true }) as never,
  });
  // In quick mode with an in-memory document, init() completes synchronously (it awaits nothing),
  // so the app can be built synchronously; the check below proves it did.
  backend.init().catch(() => {});
  if (!backend.initialized) throw new Error('openapi-backend did not initialise synchronously');
  const compiled = new Map<OperationId, ValidateFunction[]>();
  for (const operationId of operationIds) {
    compiled.set(operationId, backend.validator.getRequestValidatorsForOperation(operationId));
  }
  const definition = backend.definition as unknown as Record<string, unknown>;
  const parameters = contractParameters(definition);
  const integers = parameterNames(definition, (parameter) => parameter.in === 'query' && parameter.schema?.type === 'integer');
  const headerNames = parameterNames(definition, (parameter) => parameter.in === 'header');
  // A free-form parameter (an object, style form, explode) is serialised as its own keys.
  const freeForm = parameterNames(definition, (parameter) => parameter.in === 'query' && parameter.schema?.type === 'object');
  return (operationId, path, query, received) => {
    // Ajv's coercion takes anything `==` to a number ("0x10", " 1", "1e3"); integers must be digits.
    for (const name of integers.get(operationId) ?? []) {
      const value = query[name];
      if (value !== undefined && !DECIMAL_INTEGER.test(value)) {
        throw new InvalidRequest(`Query parameter "${name}" must be an integer, got "${truncate(value)}".`);
      }
    }
    // Header parameters are validated under their lower-case names (openapi-backend's schema) and
    // handed to the handler under the contract's spelling.
    const header: Record<string, string> = {};
    const headers: Record<string, string> = {};
    for (const name of headerNames.get(operationId) ?? []) {
      const raw = received[name.toLowerCase()];
      if (raw === undefined) continue;
      const value = Array.isArray(raw) ? raw.join(', ') : raw;
      header[name.toLowerCase()] = value;
      headers[name] = value;
    }
    // Ajv coerces and fills defaults in place: validate a copy so error bodies echo the raw query.
    const request = { path: { ...path }, query: { ...query }, header };
    // A free-form parameter's name is one more of its keys; openapi-backend would check that key
    // against the object's schema.
    for (const name of freeForm.get(operationId) ?? []) delete request.query[name];
    for (const validate of compiled.get(operationId) ?? []) {
      if (!validate(request)) throw refusalFor(operationId, validate.errors ?? [], query, header, parameters);
    }
    for (const name of freeForm.get(operationId) ?? []) if (query[name] !== undefined) request.query[name] = query[name];
    return { query: request.query, params: request.path, headers };
  };
}

/** What the contract says of one parameter, keyed by `operationId location lower-case-name`. */
interface ContractParameter {
  /** The name as the contract spells it. */
  name: string;
  description?: string;
  errorCode?: ErrorCode;
}


const DECIMAL_INTEGER = /^-?[0-9]+$/;

interface RawParameter {
  name?: string;
  in?: string;
  description?: string;
  schema?: { type?: unknown };
  'x-error-code'?: ErrorCode;
}

function operationParameters(definition: Record<string, unknown>): { operationId: string; parameters: RawParameter[] }[] {
  const result: { operationId: string; parameters: RawParameter[] }[] = [];
  for (const item of Object.values((definition['paths'] ?? {}) as Record<string, Record<string, unknown>>)) {
    for (const operation of Object.values(item)) {
      const { operationId, parameters } = (operation ?? {}) as { operationId?: string; parameters?: unknown };
      if (typeof operationId === 'string') result.push({ operationId, parameters: Array.isArray(parameters) ? (parameters as RawParameter[]) : [] });
    }
  }
  return result;
}



/** The names of each operation's parameters that `matches`, by operationId. */
function parameterNames(definition: Record<string, unknown>, matches: (parameter: RawParameter) => boolean): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const { operationId, parameters } of operationParameters(definition)) {
    result.set(operationId, parameters.filter(matches).map((parameter) => String(parameter.name)));
  }
  return result;
}

/** Every parameter's contract name, description (to explain pattern failures in words) and error code. */
function contractParameters(definition: Record<string, unknown>): Map<string, ContractParameter> {
  const result = new Map<string, ContractParameter>();
  for (const { operationId, parameters } of operationParameters(definition)) {
    for (const parameter of parameters) {
      const name = String(parameter.name);
      const entry: ContractParameter = { name };
      if (parameter.description !== undefined) entry.description = parameter.description;
      if (parameter['x-error-code'] !== undefined) entry.errorCode = parameter['x-error-code'];
      result.set(`${operationId} ${parameter.in} ${name.toLowerCase()}`, entry);
    }
  }
  return result;
}

function refusalFor(
  operationId: OperationId,
  errors: ErrorObject[],
  raw: Record<string, string>,
  header: Record<string, string>,
  parameters: Map<string, ContractParameter>,
): Error {
  const error = firstInLocationOrder(errors);
  if (error === undefined) return new InvalidRequest('The request is not valid.');
  const [, where = '', instanceName = ''] = error.instancePath.split('/');
  const params = error.params as { additionalProperty?: unknown; missingProperty?: unknown };
  const name = error.keyword === 'required' ? String(params.missingProperty) : instanceName;
  if (operationId === 'listStorefrontProducts' && where === 'query' && name === 'page' && error.keyword === 'maximum') {
    // The digits as sent (past a value's leading zeros): a page of 22 digits or more is not a
    // safe integer, and one of 309 or more is Infinity as a number.
    return new PageOutOfRange(truncate((raw['page'] ?? '').replace(/^0+(?=\d)/u, '')), MAX_STOREFRONT_PAGES);
  }
  const label = where === 'path' ? 'Path parameter' : where === 'header' ? 'Header' : 'Query parameter';
  if (error.keyword === 'additionalProperties') {
    return new InvalidRequest(`${label} "${String(params.additionalProperty)}" is not accepted by this operation.`);
  }
  const parameter = parameters.get(`${operationId} ${where} ${name.toLowerCase()}`);
  const refusal = (message: string): CatalogError => new CatalogError(parameter?.errorCode ?? 'invalid_request', message);
  const spelled = parameter?.name ?? name;
  if (error.keyword === 'required') return refusal(`${label} "${spelled}" is missing; it is required.`);
  if (where === 'header' && error.keyword === 'minLength' && header[name] === '') return refusal(`${label} "${spelled}" is empty; send a value.`);
  const received = where === 'query' ? raw[name] : undefined;
  const got = received === undefined ? '' : `, got "${truncate(received)}"`;
  const description = error.keyword === 'pattern' ? parameter?.description : undefined;
  const hint = description === undefined ? '' : ` (${description.trim().replace(/\.$/, '')})`;
  return refusal(`${label} "${spelled}" ${describe(error)}${hint}${got}.`);
}

function firstInLocationOrder(errors: ErrorObject[]): ErrorObject | undefined {
  for (const location of LOCATION_ORDER) {
    const found = errors.find((error) => error.instancePath.split('/')[1] === location || (error.instancePath === '' && error.keyword === 'required' && (error.params as { missingProperty?: unknown }).missingProperty === location));
    if (found !== undefined) return found;
  }
  return errors[0];
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
