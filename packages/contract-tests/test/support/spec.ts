// The contract as data: the bundled OpenAPI and AsyncAPI documents, one Ajv 2020 validator per
// operation × status × media type, the documented headers, and the operation table. Every test in
// this package judges traffic through `validateResponse` / `validateFrame`, so a response is held to
// exactly one reading of the spec. Validators are compiled lazily and cached; the documents are read
// once per test file (the bundle is rebuilt from specs/ when specs/dist is missing).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createContractAjv } from '@catalog/contract/ajv';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
export const SPECS_DIR = join(REPO_ROOT, 'specs');
export const OPENAPI_PATH = join(SPECS_DIR, 'dist/openapi.json');
const ASYNCAPI_PATH = join(SPECS_DIR, 'dist/asyncapi.json');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

function ensureBundled(): void {
  if (existsSync(OPENAPI_PATH) && existsSync(ASYNCAPI_PATH)) return;
  execFileSync(process.execPath, [join(SPECS_DIR, 'scripts/bundle.ts')], { stdio: 'ignore' });
}

function loadJson(path: string): JsonObject {
  return JSON.parse(readFileSync(path, 'utf8')) as JsonObject;
}

ensureBundled();
export const openapi: JsonObject = loadJson(OPENAPI_PATH);
export const asyncapi: JsonObject = loadJson(ASYNCAPI_PATH);

const OPENAPI_ID = 'https://contract.test/openapi.json';
const ASYNCAPI_ID = 'https://contract.test/asyncapi.json';


/** A fresh Ajv that knows both documents by id; schemas are addressed by JSON pointer into them. */
export function createAjv(documents: { openapi?: JsonObject; asyncapi?: JsonObject } = {}): Ajv2020 {
  // The documents carry OpenAPI/AsyncAPI keywords (`example`, `paths`…) that are not JSON Schema.
  const ajv = createContractAjv({ allErrors: true, validateSchema: false, validateFormats: true });
  ajv.addSchema({ ...(documents.openapi ?? openapi), $id: OPENAPI_ID });
  ajv.addSchema({ ...(documents.asyncapi ?? asyncapi), $id: ASYNCAPI_ID });
  return ajv;
}

const escapePointer = (token: string): string => token.replaceAll('~', '~0').replaceAll('/', '~1');

function at(document: JsonObject, pointer: string): Json {
  let node: Json = document;
  for (const raw of pointer.replace(/^#\/?/, '').split('/').filter((t) => t !== '')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object') throw new Error(`no ${pointer} in the document`);
    node = Array.isArray(node) ? (node[Number(token)] ?? null) : (node[token] ?? null);
  }
  return node;
}

/** Follows `$ref`s to components (responses, headers, parameters), keeping the pointer of the target. */
function deref(document: JsonObject, node: Json, pointer: string): { node: JsonObject; pointer: string } {
  let current = node;
  let where = pointer;
  while (current !== null && typeof current === 'object' && !Array.isArray(current) && typeof current['$ref'] === 'string') {
    where = current['$ref'];
    current = at(document, where);
  }
  if (current === null || typeof current !== 'object' || Array.isArray(current)) throw new Error(`${where} is not an object`);
  return { node: current, pointer: where };
}

interface HeaderSpec {
  name: string;
  required: boolean;
  schemaPointer: string | undefined;
}

interface ResponseSpec {
  status: number;
  /** Media type → JSON pointer of its schema in the OpenAPI document. */
  content: Map<string, string>;
  headers: HeaderSpec[];
  /** The first documented example body of the first media type, if any. */
  example: Json | undefined;
}

export interface ParameterSpec {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie';
  required: boolean;
  schema: JsonObject;
  schemaPointer: string;
  examples: Json[];
}

export interface OperationSpec {
  operationId: string;
  method: string;
  path: string;
  statuses: number[];
  responses: Map<number, ResponseSpec>;
  parameters: ParameterSpec[];
  /** Names of the security schemes any one of which the operation accepts. */
  security: string[];
  plans: string[];
}

function readExample(document: JsonObject, media: JsonObject): Json | undefined {
  if ('example' in media) return media['example'];
  const examples = media['examples'];
  if (examples !== null && typeof examples === 'object' && !Array.isArray(examples)) {
    const first = Object.values(examples)[0];
    if (first !== undefined) return deref(document, first, '').node['value'];
  }
  return undefined;
}

/** Reads the operation table out of an OpenAPI document (the real one unless a mutated copy is given). */
function readOperations(document: JsonObject = openapi): OperationSpec[] {
  const operations: OperationSpec[] = [];
  const paths = document['paths'] as Record<string, Record<string, JsonObject>>;
  const rootSecurity = (document['security'] ?? []) as Array<Record<string, unknown>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const) {
      const op = item[method];
      if (op === undefined) continue;
      const opPointer = `#/paths/${escapePointer(path)}/${method}`;
      const responses = new Map<number, ResponseSpec>();
      for (const [code, raw] of Object.entries(op['responses'] as JsonObject)) {
        const { node, pointer } = deref(document, raw, `${opPointer}/responses/${code}`);
        const content = new Map<string, string>();
        let example: Json | undefined;
        for (const [mediaType, media] of Object.entries((node['content'] ?? {}) as Record<string, JsonObject>)) {
          content.set(mediaType, `${pointer}/content/${escapePointer(mediaType)}/schema`);
          example ??= readExample(document, media);
        }
        const headers: HeaderSpec[] = [];
        for (const [name, rawHeader] of Object.entries((node['headers'] ?? {}) as JsonObject)) {
          const header = deref(document, rawHeader, `${pointer}/headers/${escapePointer(name)}`);
          headers.push({
            name,
            required: header.node['required'] === true,
            schemaPointer: 'schema' in header.node ? `${header.pointer}/schema` : undefined,
          });
        }
        responses.set(Number(code), { status: Number(code), content, headers, example });
      }
      const parameters: ParameterSpec[] = ((op['parameters'] ?? []) as Json[]).map((raw, index) => {
        const { node, pointer } = deref(document, raw, `${opPointer}/parameters/${index}`);
        const schemaRef = deref(document, node['schema'] ?? {}, `${pointer}/schema`);
        const examples: Json[] = [];
        if ('example' in node) examples.push(node['example'] ?? null);
        for (const value of Object.values((node['examples'] ?? {}) as JsonObject)) {
          examples.push(deref(document, value, '').node['value'] ?? null);
        }
        return {
          name: String(node['name']),
          in: node['in'] as ParameterSpec['in'],
          required: node['required'] === true,
          schema: schemaRef.node,
          schemaPointer: schemaRef.pointer,
          examples,
        };
      });
      const security = ((op['security'] ?? rootSecurity) as Array<Record<string, unknown>>).flatMap((s) => Object.keys(s));
      operations.push({
        operationId: String(op['operationId']),
        method: method.toUpperCase(),
        path,
        statuses: [...responses.keys()].sort((a, b) => a - b),
        responses,
        parameters,
        security,
        plans: (op['x-plans'] ?? []) as string[],
      });
    }
  }
  return operations;
}

export const operations: OperationSpec[] = readOperations();

export function operation(operationId: string): OperationSpec {
  const found = operations.find((op) => op.operationId === operationId);
  if (found === undefined) throw new Error(`no operation ${operationId} in the spec`);
  return found;
}

/** Every operationId × documented status, as `operationId status` strings. */
export function documentedCases(ops: OperationSpec[] = operations): string[] {
  return ops.flatMap((op) => op.statuses.map((status) => `${op.operationId} ${status}`));
}

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value.join(', ') : value;
}

function describeErrors(where: string, errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : '';
    return `${where}${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
  });
}

/** Validates HTTP responses against one OpenAPI document. */
export class ResponseValidator {
  readonly operations: OperationSpec[];
  readonly #ajv: Ajv2020;
  readonly #cache = new Map<string, ValidateFunction>();

  constructor(document: JsonObject = openapi) {
    this.operations = readOperations(document);
    this.#ajv = createAjv({ openapi: document });
  }

  schema(pointer: string): ValidateFunction {
    let validate = this.#cache.get(pointer);
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `${OPENAPI_ID}${pointer}` });
      this.#cache.set(pointer, validate);
    }
    return validate;
  }

  /** Human-readable violations of the spec; empty when the response conforms. */
  validate(operationId: string, status: number, headers: HeaderSource, body: unknown): string[] {
    const op = this.operations.find((o) => o.operationId === operationId);
    if (op === undefined) return [`operation ${operationId} is not in the spec`];
    const response = op.responses.get(status);
    if (response === undefined) {
      return [`${operationId}: status ${status} is not documented (documented: ${op.statuses.join(', ')})`];
    }
    const violations: string[] = [];
    for (const header of response.headers) {
      const value = headerValue(headers, header.name);
      if (value === undefined) {
        if (header.required) violations.push(`${operationId} ${status}: required header ${header.name} is missing`);
        continue;
      }
      if (header.schemaPointer === undefined) continue;
      const validate = this.schema(header.schemaPointer);
      const typed = /^-?\d+$/.test(value) && !validate(value) ? Number(value) : value;
      if (!validate(typed)) violations.push(...describeErrors(`${operationId} ${status} header ${header.name}`, validate.errors));
    }
    if (response.content.size === 0) return violations;
    const contentType = headerValue(headers, 'content-type');
    const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
    const schemaPointer = mediaType === undefined ? undefined : response.content.get(mediaType);
    if (schemaPointer === undefined || mediaType === undefined) {
      violations.push(`${operationId} ${status}: content type ${contentType ?? '(none)'} is not one of ${[...response.content.keys()].join(', ')}`);
      return violations;
    }
    // An event stream is judged frame by frame against the AsyncAPI document, not as one JSON body.
    if (mediaType === 'text/event-stream') return violations;
    let parsed = body;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body);
      } catch {
        violations.push(`${operationId} ${status}: body is not JSON: ${body.slice(0, 80)}`);
        return violations;
      }
    }
    const validate = this.schema(schemaPointer);
    if (!validate(parsed)) violations.push(...describeErrors(`${operationId} ${status} body`, validate.errors));
    return violations;
  }

  /** Violations of a named component schema (e.g. `CatalogProductFree`) by a value. */
  validateComponent(name: string, value: unknown): string[] {
    const validate = this.schema(`#/components/schemas/${escapePointer(name)}`);
    return validate(value) ? [] : describeErrors(name, validate.errors);
  }
}

const defaultValidator = new ResponseValidator();

/** Human-readable violations of the spec by one response; empty when it conforms. */
export function validateResponse(operationId: string, status: number, headers: HeaderSource, body: unknown): string[] {
  return defaultValidator.validate(operationId, status, headers, body);
}

/**
 * The free plan's product must be exactly `CatalogProductFree`: `ProductDetail.data` is a oneOf
 * that a Pro shape also satisfies, so plans are checked against the free schema itself.
 */
export function validateFreeProduct(body: unknown): string[] {
  const data = body !== null && typeof body === 'object' ? (body as { data?: unknown }).data : undefined;
  return defaultValidator.validateComponent('CatalogProductFree', data);
}

export function validateProProduct(body: unknown): string[] {
  const data = body !== null && typeof body === 'object' ? (body as { data?: unknown }).data : undefined;
  return defaultValidator.validateComponent('CatalogProductPro', data);
}

/** One server-sent event as received: its fields and its raw data line(s). */
export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** Validates stream frames against the AsyncAPI messages of the `prices` channel. */
class FrameValidator {
  readonly #ajv: Ajv2020;
  readonly #messages: Map<string, { headers: ValidateFunction; payload: ValidateFunction }>;

  constructor(document: JsonObject = asyncapi) {
    this.#ajv = createAjv({ asyncapi: document });
    this.#messages = new Map();
    const messages = at(document, '#/components/messages') as Record<string, JsonObject>;
    for (const name of Object.keys(messages)) {
      const base = `${ASYNCAPI_ID}#/components/messages/${escapePointer(name)}`;
      this.#messages.set(name, {
        headers: this.#ajv.compile({ $ref: `${base}/headers` }),
        payload: this.#ajv.compile({ $ref: `${base}/payload` }),
      });
    }
  }

  /** The AsyncAPI message a frame claims to be: `reset` by name, otherwise a price update. */
  static messageOf(frame: SseFrame): string {
    return frame.event === 'reset' ? 'reset' : 'priceUpdate';
  }

  validate(frame: SseFrame): string[] {
    const name = FrameValidator.messageOf(frame);
    const message = this.#messages.get(name);
    if (message === undefined) return [`message ${name} is not in the AsyncAPI document`];
    const violations: string[] = [];
    const fields: Record<string, unknown> = {};
    if (frame.event !== undefined) fields['event'] = frame.event;
    if (frame.id !== undefined) fields['id'] = /^\d+$/.test(frame.id) ? Number(frame.id) : frame.id;
    if (!message.headers(fields)) violations.push(...describeErrors(`${name} frame fields`, message.headers.errors));
    if (name === 'reset' && frame.id !== undefined) violations.push('reset frame carries an id');
    let payload: unknown;
    try {
      payload = JSON.parse(frame.data);
    } catch {
      return [...violations, `${name} data is not JSON: ${frame.data.slice(0, 80)}`];
    }
    if (!message.payload(payload)) violations.push(...describeErrors(`${name} data`, message.payload.errors));
    if (name === 'priceUpdate' && payload !== null && typeof payload === 'object') {
      // The event name is the topic of the payload: `price:<source>:<market, lowercase>`.
      const event = payload as { source?: unknown; market?: unknown };
      const topic = `price:${String(event.source)}:${String(event.market).toLowerCase()}`;
      if (frame.event !== topic) violations.push(`priceUpdate event name ${String(frame.event)} does not match its data's topic ${topic}`);
    }
    return violations;
  }
}

const defaultFrameValidator = new FrameValidator();

export function validateFrame(frame: SseFrame): string[] {
  return defaultFrameValidator.validate(frame);
}

/**
 * Splits an event stream into frames. Comment lines and `retry:`-only blocks are not frames;
 * `retry` is reported separately so callers can assert it.
 */
export function parseSse(text: string): { frames: SseFrame[]; retry: string[]; blocks: string[] } {
  const frames: SseFrame[] = [];
  const retry: string[] = [];
  const blocks: string[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    const lines = block.split('\n').filter((line) => line !== '' && !line.startsWith(':'));
    const fieldLines = lines.filter((line) => !line.startsWith('retry:'));
    for (const line of lines) if (line.startsWith('retry:')) retry.push(line.slice('retry:'.length).trim());
    if (fieldLines.length === 0) continue;
    blocks.push(fieldLines.join('\n'));
    let id: string | undefined;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of fieldLines) {
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    frames.push({ id, event, data: data.join('\n') });
  }
  return { frames, retry, blocks };
}

/** The normalised transcript of a stream: its frames (heartbeats and `retry` removed), byte-stable. */
export function normaliseTranscript(text: string): string {
  return parseSse(text).blocks.map((block) => `${block}\n\n`).join('');
}
