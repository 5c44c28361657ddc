// Validates a response body against the schema the OpenAPI document gives for that operation and
// status, with Ajv's JSON Schema 2020-12 dialect (the document is OpenAPI 3.1).
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { createContractAjv } from '@catalog/contract/ajv';
import { expect } from 'vitest';
import { operations, webhooks, type OperationId } from '@catalog/contract';
import { openapiDocument } from '@catalog/contract/documents';

type Json = Record<string, unknown>;
const ajv = createContractAjv({ allErrors: true });
const compiled = new Map<string, ValidateFunction>();
const components = openapiDocument['components'] as Json;

function follow(value: Json): Json {
  const ref = value['$ref'];
  if (typeof ref !== 'string') return value;
  let target: unknown = openapiDocument;
  for (const segment of ref.slice(2).split('/')) target = (target as Json)[segment];
  return follow(target as Json);
}

export function schemaFor(operationId: OperationId, status: number): ValidateFunction {
  const key = `${operationId} ${status}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    const { path, method } = operations[operationId];
    const operation = ((openapiDocument['paths'] as Json)[path] as Json)[method.toLowerCase()] as Json;
    const response = (operation['responses'] as Json)[String(status)];
    if (response === undefined) throw new Error(`${operationId} documents no ${status} response`);
    const content = (follow(response as Json)['content'] as Json)['application/json'] as Json;
    // Refs in the schema point into the document's components; carry them along at the root.
    validate = ajv.compile({ ...(content['schema'] as Json), components });
    compiled.set(key, validate);
  }
  return validate;
}

/** Fails the test unless `body` is what the spec documents for this operation and status. */
export function expectMatchesSpec(operationId: OperationId, status: number, body: unknown): void {
  expect(operations[operationId].statuses as readonly number[], `${operationId} documents status ${status}`).toContain(status);
  const validate = schemaFor(operationId, status);
  const valid = validate(body);
  expect(validate.errors ?? [], `${operationId} ${status} body matches the spec`).toEqual([]);
  expect(valid).toBe(true);
}

/** The ErrorBody schema alone, for responses outside any operation (404, /readyz). */
export function expectErrorBody(body: unknown): void {
  const key = 'ErrorBody';
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: '#/components/schemas/ErrorBody', components });
    compiled.set(key, validate);
  }
  validate(body);
  expect(validate.errors ?? [], 'body is an ErrorBody').toEqual([]);
}

/** Fails the test unless `body` is the request body the contract's webhook `name` documents. */
export function expectMatchesWebhook(name: keyof typeof webhooks, body: unknown): void {
  const key = `webhook ${name}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    const operation = ((openapiDocument['webhooks'] as Json)[name] as Json)[webhooks[name].method.toLowerCase()] as Json;
    const content = ((operation['requestBody'] as Json)['content'] as Json)['application/json'] as Json;
    validate = ajv.compile({ ...(content['schema'] as Json), components });
    compiled.set(key, validate);
  }
  validate(body);
  expect(validate.errors ?? [], `the ${name} webhook's body matches the spec`).toEqual([]);
}
