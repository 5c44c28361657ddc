// Generated requests and the checks Schemathesis would run on their responses (it cannot run on this
// machine, so its checklist is implemented here). A schema-driven sampler turns each operation's
// OpenAPI parameters into fast-check arbitraries of valid requests and of invalid ones (one mutation
// each: out of range, wrong type, too long, bad enum, bad pattern, repeated, missing required header,
// missing or wrong credentials, wrong method). The same checker judges any target: Prism now, the
// real server once integrated. Runs are reproducible: the seed is printed and FC_SEED overrides it.
import fc from 'fast-check';
import { type OperationSpec, type ParameterSpec, validateResponse } from './support/spec.ts';
import { parseViolations, responseViolations, type Violation } from './support/prism.ts';

export const FC_SEED = process.env['FC_SEED'] === undefined ? 20261123 : Number(process.env['FC_SEED']);
// Valid and invalid requests per operation and target (each test's name says how many ran); FC_RUNS
// raises it to explore further from one seed.
export const FC_RUNS = process.env['FC_RUNS'] === undefined ? 50 : Math.max(1, Number(process.env['FC_RUNS']));

type Expectation = 'accepted' | 'bad-request' | 'unauthorized' | 'method-not-allowed';

export interface GeneratedRequest {
  operationId: string;
  expectation: Expectation;
  /** What makes the request invalid (or `valid`), for failure messages. */
  reason: string;
  method: string;
  pathname: string;
  /** The path parameters' values, unencoded, by name (the contract's `{name}`s in the path). */
  pathParams: Record<string, string>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** Whether a schema validator alone (Prism) can tell this request is invalid. */
  schemaLevel: boolean;
}

export interface Target {
  name: string;
  baseUrl(op: OperationSpec): string;
  /** A key every operation accepts (Pro plan). */
  validKey: string;
  /** Rejects keys it does not know (Prism accepts any). */
  knowsKeys: boolean;
  /** Answers other methods with 405 and `Allow` (Prism does not). */
  answersWrongMethods: boolean;
  /** Checks filter expressions and topics beyond their JSON Schema (Prism does not). */
  semanticValidation: boolean;
  /** Adds `sl-violations` headers (Prism). */
  reportsViolations: boolean;
  /** Parameter values that exist in the target's data, so valid requests can find something. */
  knownValues?: Partial<Record<string, string[]>>;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const alnumChar = fc.constantFrom(...ALNUM.split(''));
const word = fc.string({ unit: alnumChar, minLength: 1, maxLength: 12 });

const TOPICS = ['marketplacea', 'marketplaceb'].flatMap((source) => ['us', 'uk', 'nl', 'de', 'fr'].map((market) => `price:${source}:${market}`));

const comparison = fc.oneof(
  fc.tuple(fc.constantFrom('price_min', 'price_max', 'price_display'), fc.constantFrom('=', '!=', '>', '>=', '<', '<='), fc.integer({ min: 0, max: 2000 })).map(([f, op, v]) => `${f} ${op} ${v}`),
  fc.tuple(fc.constantFrom('brand', 'shop_name', 'product_type', 'title', 'tags', 'slug'), fc.constantFrom('=', '!='), fc.constantFrom('Nike', "'Jordan'", '"Sneaker Hub"', 'Sneakers', 'COLOR_White')).map(([f, op, v]) => `${f} ${op} ${v}`),
  fc.constantFrom('available = true', 'available = false', 'cursor > 17000000000000000', 'updated_at >= "2025-01-01T00:00:00Z"', 'product_published_at < "2030-01-01T00:00:00Z"'),
  fc.tuple(fc.constantFrom('brand', 'shop_name'), fc.constantFrom('IN', 'NOT IN'), fc.array(fc.constantFrom('Nike', '"Jordan"', "'Adidas'", 'Puma'), { minLength: 1, maxLength: 3 })).map(([f, op, vs]) => `${f} ${op} [${vs.join(', ')}]`),
);
/** Filter expressions the language accepts: comparisons joined by AND/OR, some negated or grouped. */
const validFilter = fc
  .array(fc.tuple(fc.boolean(), fc.boolean(), comparison), { minLength: 1, maxLength: 4 })
  .chain((parts) =>
    fc.array(fc.constantFrom(' AND ', ' OR '), { minLength: parts.length - 1, maxLength: parts.length - 1 }).map((joins) =>
      parts.map(([not, group, c], i) => `${i === 0 ? '' : joins[i - 1]}${not ? 'NOT ' : ''}${group ? `(${c})` : c}`).join(''),
    ),
  );
const invalidFilter = fc.oneof(
  fc.constantFrom('shop_name =', 'price_min >> 3', '(brand = Nike', 'brand IN [Nike', 'unknown_field = 1', 'AND', 'brand = Nike AND', '"unterminated', 'price_min <> 3', ')'),
  word.map((w) => `${w} ${w} ${w} =`),
  fc.integer({ min: 20, max: 40 }).map((depth) => `${'('.repeat(depth)}brand = Nike${')'.repeat(depth)}`),
);
/** `Filter` header expressions: the same language over the price event's fields. */
const eventComparison = fc.oneof(
  fc.tuple(fc.constantFrom('product_id', 'variant_id', 'sku', 'size', 'currency', 'source', 'market'), fc.constantFrom('=', '!='), fc.constantFrom('"3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f"', 'US', "'marketplacea'", 'DD1391-100', '"10.5"')).map(([f, op, v]) => `${f} ${op} ${v}`),
  fc.tuple(fc.constantFrom('=', '!=', '>', '>=', '<', '<='), fc.integer({ min: 0, max: 2000 })).map(([op, v]) => `price ${op} ${v}`),
  fc.tuple(fc.constantFrom('product_id', 'sku', 'market'), fc.constantFrom('IN', 'NOT IN'), fc.array(fc.constantFrom('US', '"NL"', "'p1'", 'DD1391-100'), { minLength: 1, maxLength: 3 })).map(([f, op, vs]) => `${f} ${op} [${vs.join(', ')}]`),
);
const validEventFilter = fc
  .array(fc.tuple(fc.boolean(), eventComparison), { minLength: 1, maxLength: 4 })
  .chain((parts) =>
    fc.array(fc.constantFrom(' AND ', ' OR '), { minLength: parts.length - 1, maxLength: parts.length - 1 }).map((joins) =>
      parts.map(([not, c], i) => `${i === 0 ? '' : joins[i - 1]}${not ? 'NOT ' : ''}(${c})`).join(''),
    ),
  );
const invalidEventFilter = fc.oneof(
  fc.constantFrom('price <', 'brand = Nike', 'market < US', 'price = cheap', '(sku = X', 'product_id IN []', 'AND'),
  fc.constant(`product_id IN [${Array.from({ length: 1001 }, (_, i) => i).join(',')}]`),
);
const validTopics = fc
  .uniqueArray(fc.constantFrom(...TOPICS), { minLength: 1, maxLength: 5 })
  .chain((topics) => fc.constantFrom(', ', ',', ' , ').map((sep) => topics.join(sep)));
const invalidTopics = fc.oneof(
  fc.constantFrom('price:marketplacec:us', 'price:marketplacea:usa', 'PRICE:marketplacea:us', 'marketplacea:us', 'price:marketplacea:', 'price::us', 'price:marketplacea:u1'),
  word.map((w) => `price:${w.toLowerCase()}x:us`),
  fc.constant(Array.from({ length: 65 }, (_, i) => `price:marketplacea:${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`).join(',')),
);

interface SchemaShape {
  type?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: string[];
}

/** Schema-valid values; a few parameters also carry meaning beyond their schema, sampled from their language. */
function validValue(param: ParameterSpec, target: Target): fc.Arbitrary<string> {
  const known = target.knownValues?.[param.name] ?? [];
  const schema = param.schema as SchemaShape;
  let base: fc.Arbitrary<string>;
  if (schema.type === 'object') {
    // A free-form parameter (style form, explode): any keys of its own, sent as `key=value`.
    return fc.tuple(fc.constantFrom('lastEventId', 'x', 't'), fc.array(alnumChar, { minLength: 1, maxLength: 8 }).map((chars) => chars.join(''))).map(([key, value]) => `${key}=${value}`);
  }
  if (param.name === 'filters') base = validFilter;
  else if (param.name === 'Topics') base = validTopics;
  else if (param.name === 'Filter') base = validEventFilter;
  else if (schema.enum !== undefined) base = fc.constantFrom(...schema.enum);
  else if (schema.type === 'integer') base = fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 1_000_000 }).map(String);
  else if (schema.pattern !== undefined) {
    const max = schema.maxLength ?? 200;
    base = fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= max && !s.includes('.'));
  } else {
    const max = Math.min(schema.maxLength ?? 40, 40);
    base = fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' ').slice(0, max));
  }
  const examples = param.examples.filter((e): e is string => typeof e === 'string' || typeof e === 'number').map(String);
  const pool = [...known, ...examples];
  return pool.length === 0 ? base : fc.oneof({ arbitrary: base, weight: 2 }, { arbitrary: fc.constantFrom(...pool), weight: 1 });
}

interface Mutation {
  reason: string;
  value: string | undefined;
  /** Send the parameter twice (`a=1&a=2`). */
  repeat?: string;
  schemaLevel: boolean;
}

/** Values that break one parameter's schema (or its language), each labelled with why. */
function invalidValues(param: ParameterSpec): fc.Arbitrary<Mutation>[] {
  const schema = param.schema as SchemaShape;
  const out: fc.Arbitrary<Mutation>[] = [];
  if (schema.type === 'integer') {
    const min = schema.minimum;
    const max = schema.maximum;
    if (min !== undefined) out.push(fc.integer({ min: min - 1000, max: min - 1 }).map((v) => ({ reason: `${param.name} below minimum ${min}`, value: String(v), schemaLevel: true })));
    if (max !== undefined) out.push(fc.integer({ min: max + 1, max: max + 1_000_000 }).map((v) => ({ reason: `${param.name} above maximum ${max}`, value: String(v), schemaLevel: true })));
    out.push(fc.oneof(word.filter((w) => !/^\d+$/.test(w)), fc.constantFrom('1.5', 'true', 'one', '')).map((v) => ({ reason: `${param.name} not an integer`, value: v, schemaLevel: v !== '' })));
    out.push(fc.tuple(fc.integer({ min: min ?? 1, max: Math.min(max ?? 50, 50) }), fc.integer({ min: min ?? 1, max: Math.min(max ?? 50, 50) })).map(([a, b]) => ({ reason: `${param.name} repeated`, value: String(a), repeat: String(b), schemaLevel: true })));
  }
  if (schema.enum !== undefined) {
    const allowed = schema.enum;
    out.push(fc.oneof(word, fc.constantFrom('cursor', 'price:asc', 'CURSOR:ASC', 'cursor:up')).filter((v) => !allowed.includes(v)).map((v) => ({ reason: `${param.name} not in enum`, value: v, schemaLevel: true })));
    out.push(fc.tuple(fc.constantFrom(...allowed), fc.constantFrom(...allowed)).map(([a, b]) => ({ reason: `${param.name} repeated`, value: a, repeat: b, schemaLevel: true })));
  }
  if (schema.maxLength !== undefined && schema.type === 'string') {
    const max = schema.maxLength;
    out.push(fc.integer({ min: max + 1, max: max + 64 }).map((n) => ({ reason: `${param.name} longer than ${max}`, value: param.name === 'gtin' ? '1'.repeat(n) : 'a'.repeat(n), schemaLevel: true })));
  }
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern);
    const candidates =
      param.in === 'path'
        ? fc.oneof(
            fc.tuple(fc.constantFrom('-', '_', '~'), word).map(([a, b]) => `${a}${b}`),
            fc.tuple(word, fc.constantFrom(' ', '!', '@', '$', '*', '(', ',', ';', '=', '+', "'"), word).map(([a, c, b]) => `${a}${c}${b}`),
          )
        : fc.oneof(word, fc.integer({ min: 0, max: 999 }).map(String), fc.constantFrom('12a45', '-1234', '1234567890123456789', '12 34'));
    out.push(candidates.filter((v) => !pattern.test(v)).map((v) => ({ reason: `${param.name} does not match ${schema.pattern}`, value: v, schemaLevel: true })));
  }
  if (param.name === 'filters') out.push(invalidFilter.map((v) => ({ reason: 'filters not in the filter language', value: v, schemaLevel: v.length > 2000 })));
  if (param.name === 'Filter') out.push(invalidEventFilter.map((v) => ({ reason: 'Filter not in the filter language', value: v, schemaLevel: false })));
  if (param.name === 'Topics') out.push(invalidTopics.map((v) => ({ reason: 'Topics names an invalid topic', value: v, schemaLevel: v.length > 2000 })));
  if (param.required && param.in === 'header') out.push(fc.constant({ reason: `required header ${param.name} missing`, value: undefined, schemaLevel: true }));
  if (param.in === 'query' && schema.type === 'string' && schema.enum === undefined && param.name !== 'gtin') {
    out.push(fc.tuple(word, word).map(([a, b]) => ({ reason: `${param.name} repeated`, value: a, repeat: b, schemaLevel: false })));
  }
  return out;
}

function credentialHeader(op: OperationSpec, key: string): Record<string, string> {
  return { Authorization: op.security.includes('BearerAuth') ? `Bearer ${key}` : key };
}

function buildRequest(op: OperationSpec, values: Map<string, string | undefined>, target: Target, extra: Partial<GeneratedRequest> & Pick<GeneratedRequest, 'expectation' | 'reason' | 'schemaLevel'>, repeat?: [string, string]): GeneratedRequest {
  let pathname = op.path;
  const pathParams: Record<string, string> = {};
  const query: Array<[string, string]> = [];
  const headers: Record<string, string> = { ...credentialHeader(op, target.validKey) };
  for (const param of op.parameters) {
    const value = values.get(param.name);
    if (value === undefined) continue;
    if (param.in === 'path') {
      pathParams[param.name] = value;
      pathname = pathname.replace(`{${param.name}}`, encodeURIComponent(value));
    }
    else if (param.in === 'query' && (param.schema as SchemaShape).type === 'object') query.push(value.split('=', 2) as [string, string]);
    else if (param.in === 'query') query.push([param.name, value]);
    else if (param.in === 'header') headers[param.name] = value;
  }
  if (repeat !== undefined) query.push(repeat);
  return { operationId: op.operationId, method: op.method, pathname, pathParams, query, headers, ...extra };
}

/** Valid requests: every required parameter and any subset of the optional ones, each schema-valid. */
function validRequests(op: OperationSpec, target: Target): fc.Arbitrary<GeneratedRequest> {
  const fields: Record<string, fc.Arbitrary<string | undefined>> = {};
  for (const param of op.parameters) {
    const value = validValue(param, target);
    fields[param.name] = param.required ? value : fc.option(value, { nil: undefined, freq: 2 });
  }
  return fc.record(fields).map((record) =>
    buildRequest(op, new Map(Object.entries(record)), target, { expectation: 'accepted', reason: 'valid', schemaLevel: true }),
  );
}

/** Invalid requests: a valid request with exactly one thing wrong. */
function invalidRequests(op: OperationSpec, target: Target): fc.Arbitrary<GeneratedRequest> {
  const valid = validRequests(op, target);
  const choices: fc.Arbitrary<GeneratedRequest>[] = [];
  for (const param of op.parameters) {
    for (const mutation of invalidValues(param)) {
      choices.push(
        fc.tuple(valid, mutation).map(([base, m]) => {
          const values = new Map<string, string | undefined>();
          for (const p of op.parameters) {
            const fromBase = p.in === 'path' ? base.pathParams[p.name] : p.in === 'query' ? base.query.find(([n]) => n === p.name)?.[1] : base.headers[p.name];
            values.set(p.name, fromBase);
          }
          values.set(param.name, m.value);
          return buildRequest(op, values, target, { expectation: 'bad-request', reason: m.reason, schemaLevel: m.schemaLevel }, m.repeat === undefined ? undefined : [param.name, m.repeat]);
        }),
      );
    }
  }
  const bearer = op.security.includes('BearerAuth');
  choices.push(
    valid.map((r) => {
      const { Authorization: _dropped, ...headers } = r.headers;
      return { ...r, headers, expectation: 'unauthorized' as const, reason: 'no Authorization header', schemaLevel: true };
    }),
    fc.tuple(valid, fc.string({ unit: alnumChar, minLength: 8, maxLength: 48 })).map(([r, key]) => ({
      ...r,
      headers: { ...r.headers, Authorization: bearer ? `Bearer ${key}` : key },
      expectation: 'unauthorized' as const,
      reason: 'unknown key',
      schemaLevel: false,
    })),
    fc.tuple(valid, fc.constantFrom('Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Token abc')).map(([r, value]) => ({
      ...r,
      headers: { ...r.headers, Authorization: value },
      expectation: 'unauthorized' as const,
      reason: `malformed credentials "${value}"`,
      schemaLevel: false,
    })),
    fc.tuple(valid, fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE')).map(([r, method]) => ({
      ...r,
      method,
      expectation: 'method-not-allowed' as const,
      reason: `${method} instead of ${op.method}`,
      schemaLevel: false,
    })),
  );
  if (bearer) {
    choices.push(valid.map((r) => ({ ...r, headers: { ...r.headers, Authorization: target.validKey }, expectation: 'unauthorized' as const, reason: 'key without the Bearer scheme', schemaLevel: true })));
  }
  return fc.oneof(...choices);
}

/** Whether the target can be expected to tell this request apart at all. */
function applies(request: GeneratedRequest, target: Target): boolean {
  if (request.expectation === 'method-not-allowed') return target.answersWrongMethods;
  if (request.reason === 'unknown key' || request.reason.startsWith('malformed credentials')) return target.knowsKeys;
  if (!request.schemaLevel) return target.semanticValidation;
  return true;
}

export interface Exchange {
  status: number;
  headers: Headers;
  body: string;
}

export async function send(target: Target, op: OperationSpec, request: GeneratedRequest): Promise<Exchange> {
  const search = request.query.length === 0 ? '' : `?${new URLSearchParams(request.query).toString()}`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  try {
    const response = await fetch(`${target.baseUrl(op)}${request.pathname}${search}`, { method: request.method, headers: request.headers, signal: controller.signal });
    // A live stream never ends: its headers are the response; the body is judged by the stream tests.
    const streaming = response.headers.get('content-type')?.startsWith('text/event-stream') === true && target.semanticValidation;
    const body = streaming ? '' : await response.text();
    if (streaming) await response.body?.cancel();
    return { status: response.status, headers: response.headers, body };
  } finally {
    clearTimeout(timer);
  }
}

const BAD_REQUEST_CODES = new Set(['invalid_request', 'invalid_filter', 'page_out_of_range', 'invalid_topics']);

/** Schemathesis' checks on one exchange; returns what failed, empty when all pass. */
function check(op: OperationSpec, request: GeneratedRequest, exchange: Exchange, target: Target): string[] {
  const failures: string[] = [];
  const { status, headers, body } = exchange;
  // not_a_server_error
  if (status >= 500) failures.push(`not_a_server_error: ${status}`);
  // status_code_conformance, content_type_conformance, response_headers_conformance, response_schema_conformance
  const isStream = headers.get('content-type')?.startsWith('text/event-stream') === true;
  failures.push(...validateResponse(op.operationId, status, headers, isStream ? '' : body).map((v) => `conformance: ${v}`));
  let parsed: { error?: unknown } | undefined;
  try {
    parsed = isStream ? undefined : (JSON.parse(body) as { error?: unknown });
  } catch {
    parsed = undefined;
  }
  switch (request.expectation) {
    case 'accepted': {
      // positive_data_acceptance: a valid request may name something that exists nowhere (a product
      // id, say), which is a refusal only where the operation documents no 404.
      const accepted = status === 200 || (status === 404 && op.statuses.includes(404));
      if (!accepted) failures.push(`positive_data_acceptance: valid request got ${status} ${body.slice(0, 200)}`);
      break;
    }
    case 'bad-request':
      // negative_data_rejection
      if (status !== 400) failures.push(`negative_data_rejection: ${request.reason} got ${status}, expected 400`);
      else if (!BAD_REQUEST_CODES.has(String(parsed?.error))) failures.push(`negative_data_rejection: 400 with error code ${String(parsed?.error)}`);
      break;
    case 'unauthorized':
      // missing_required_header / ignored_auth: never a 200 without a valid key
      if (status === 200) failures.push(`ignored_auth: ${request.reason} got 200`);
      else if (status !== 401) failures.push(`ignored_auth: ${request.reason} got ${status}, expected 401`);
      else if (parsed?.error !== 'unauthorized') failures.push(`ignored_auth: 401 with error code ${String(parsed?.error)}`);
      break;
    case 'method-not-allowed':
      // unsupported_method
      if (status !== 405) failures.push(`unsupported_method: ${request.method} got ${status}, expected 405`);
      else if (headers.get('allow') === null) failures.push('unsupported_method: 405 without an Allow header');
      break;
    default: {
      const never: never = request.expectation;
      throw new Error(`unknown expectation ${String(never)}`);
    }
  }
  if (target.reportsViolations) {
    const violations: Violation[] = parseViolations(headers.get('sl-violations'));
    const known = op.operationId === 'streamPrices' ? (v: Violation) => v.message === 'Response body must be object' : () => false;
    const fromResponse = responseViolations(violations).filter((v) => !known(v));
    if (fromResponse.length > 0) failures.push(`sl-violations on the response: ${JSON.stringify(fromResponse)}`);
    // The sampler and Prism must agree on what is invalid: a schema-level mutation is a request violation.
    const fromRequest = violations.filter((v) => v.location[0] === 'request');
    if (request.expectation === 'accepted' && fromRequest.length > 0) failures.push(`Prism finds the valid request invalid: ${JSON.stringify(fromRequest)}`);
    if (request.expectation === 'bad-request' && request.schemaLevel && fromRequest.length === 0) failures.push(`Prism finds nothing wrong with "${request.reason}"`);
  }
  return failures.map((f) => `${request.method} ${request.pathname}?${new URLSearchParams(request.query).toString()} [${request.reason}] ${f}`);
}

export interface RunCounts {
  valid: number;
  invalid: number;
  skipped: number;
}

/**
 * Runs `FC_RUNS` valid and `FC_RUNS` invalid requests for one operation against a target, asserting
 * the checks on each (fast-check shrinks a failure to the smallest request that shows it).
 */
export async function runGeneratedRequests(op: OperationSpec, target: Target, send_: typeof send = send): Promise<RunCounts> {
  const counts: RunCounts = { valid: 0, invalid: 0, skipped: 0 };
  const property = (kind: 'valid' | 'invalid') =>
    fc.asyncProperty(kind === 'valid' ? validRequests(op, target) : invalidRequests(op, target), async (request) => {
      if (!applies(request, target)) {
        counts.skipped++;
        return;
      }
      counts[kind]++;
      const failures = check(op, request, await send_(target, op, request), target);
      if (failures.length > 0) throw new Error(failures.join('\n'));
    });
  await fc.assert(property('valid'), { seed: FC_SEED, numRuns: FC_RUNS });
  // Skipped requests do not count: keep sampling until FC_RUNS invalid requests were judged.
  let round = 0;
  while (counts.invalid < FC_RUNS && round < 20) {
    const seen = counts.invalid + counts.skipped;
    const judged = seen === 0 ? 0.7 : counts.invalid / seen;
    const needed = Math.ceil((FC_RUNS - counts.invalid) / Math.max(judged, 0.1));
    await fc.assert(property('invalid'), { seed: FC_SEED + round, numRuns: Math.max(needed, 10) });
    round++;
  }
  return counts;
}
