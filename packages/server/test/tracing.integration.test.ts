// Tracing as the service runs it, in a process of its own (test/support/traced-request.ts): one
// request becomes one trace with its route, its database and Redis spans and its request id.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SpanKind } from '@opentelemetry/api';
import { beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID_ATTRIBUTE } from '../src/tracing.ts';
import type { PrintedSpan } from './support/traced-request.ts';

const TRACED_REQUEST = fileURLToPath(new URL('./support/traced-request.ts', import.meta.url));
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = 'redis://127.0.0.1:6379';

describe('startTracing', () => {
  let spans: PrintedSpan[];

  beforeAll(async () => {
    // The operator's OTEL_* variables (a service name, an exporter) are not this test's.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
    const { stdout } = await promisify(execFile)(process.execPath, [TRACED_REQUEST, POSTGRES_URL, REDIS_URL], { env, timeout: 20_000 });
    spans = JSON.parse(stdout) as PrintedSpan[];
  });

  const byScope = (scope: string): PrintedSpan[] => spans.filter((span) => span.scope === `@opentelemetry/instrumentation-${scope}`);
  const serverSpan = (): PrintedSpan => {
    const found = byScope('http').filter((span) => span.kind === SpanKind.SERVER);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  it('makes one trace of a request, from the catalog service', () => {
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['catalog']));
  });

  it('names the server span by the route and marks it with the request id', () => {
    expect(serverSpan().name).toBe('GET /v2/products/:id');
    expect(serverSpan().attributes['http.route']).toBe('/v2/products/:id');
    expect(serverSpan().attributes[REQUEST_ID_ATTRIBUTE]).toBe('trace-me-42');
  });

  it('holds the express request handler, the query and the Redis command', () => {
    expect(byScope('express').map((span) => span.attributes['express.type'])).toContain('request_handler');
    expect(byScope('pg').map((span) => span.attributes['db.query.text'])).toContain('SELECT 1 AS one');
    expect(byScope('ioredis').map((span) => span.attributes['db.operation.name'])).toContain('get');
  });
});
