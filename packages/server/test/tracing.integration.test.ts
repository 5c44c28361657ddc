// Tracing as the service runs it, in processes of their own: the module on a small Express app
// (test/support/traced-request.ts: one request becomes one trace with its route, its database and
// Redis spans and its request id), and `catalog serve` exporting over OTLP to a collector here.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SpanKind } from '@opentelemetry/api';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID_ATTRIBUTE } from '../src/tracing.ts';
import { runCli } from './cli/run-cli.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres-test-database.ts';
import type { PrintedSpan } from './support/traced-request.ts';

const TRACED_REQUEST = fileURLToPath(new URL('./support/traced-request.ts', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = 'redis://127.0.0.1:6379';

/** The environment without the operator's OTEL_* variables (a service name, an exporter), which are not the tests'. */
function envWithoutOtel(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_'))), ...extra };
}

describe('startTracing', () => {
  let spans: PrintedSpan[];

  beforeAll(async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [TRACED_REQUEST, POSTGRES_URL, REDIS_URL], { env: envWithoutOtel(), timeout: 20_000 });
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
    // The contract's route, not the pattern Express matched it with.
    const handler = byScope('express').find((span) => span.attributes['express.type'] === 'request_handler');
    expect(handler?.attributes).toMatchObject({ 'http.route': '/v2/products/:id', 'express.name': '/v2/products/:id' });
    expect(byScope('pg').map((span) => span.attributes['db.query.text'])).toContain('SELECT 1 AS one');
    expect(byScope('ioredis').map((span) => span.attributes['db.operation.name'])).toContain('get');
  });
});

/** A span as OTLP/JSON carries it, attributes flattened. */
interface ExportedSpan {
  traceId: string;
  name: string;
  scope: string;
  attributes: Record<string, unknown>;
}

interface OtlpJson {
  resourceSpans: { scopeSpans: { scope: { name: string }; spans: { traceId: string; name: string; attributes: { key: string; value: Record<string, unknown> }[] }[] }[] }[];
}

/** An OTLP/HTTP JSON collector on a free port: every span posted to /v1/traces. */
async function startCollector(): Promise<{ server: Server; url: string; spans: ExportedSpan[] }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      for (const resource of (JSON.parse(body) as OtlpJson).resourceSpans) {
        for (const { scope, spans: scoped } of resource.scopeSpans) {
          for (const span of scoped) {
            const attributes = Object.fromEntries(span.attributes.map(({ key, value }) => [key, Object.values(value)[0]]));
            spans.push({ traceId: span.traceId, name: span.name, scope: scope.name, attributes });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

describe('catalog serve with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let database: TestDatabase;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  const prefix = `catalog-test-${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    [database, collector] = await Promise.all([createTestDatabase(), startCollector()]);
    const created = await runCli(['keys', 'create', '--db', database.url(), '--plan', 'pro']);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim().split('\n').at(-1)!;
    const env = envWithoutOtel({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    const args = ['serve', '--db', database.url(), '--price-log', `${REDIS_URL}?prefix=${prefix}`, '--port', '0', '--sse-port', '0'];
    const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let output = '';
    const apiUrl = await new Promise<string>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const listening = output.split('\n').find((line) => line.includes('"listening"'));
        if (listening !== undefined) resolve((JSON.parse(listening) as { apiUrl: string }).apiUrl);
      });
      void exited.then(() => reject(new Error(`serve exited before listening:\n${output}`)));
    });
    const unknown = await fetch(`${apiUrl}/v2/products/00000000-0000-4000-8000-000000000000`, { headers: { authorization: key, 'x-request-id': 'serve-trace-1' } });
    expect(unknown.status).toBe(404);
    expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
    // SIGTERM: the service drains, then tracing exports what it holds before the process exits.
    child.kill('SIGTERM');
    await exited;
  }, 60_000);

  afterAll(async () => {
    collector?.server.close();
    await database?.drop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('exports the request as one trace: the server span by route and request id, with its database and Redis spans', () => {
    const server = collector.spans.filter((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === 'serve-trace-1');
    expect(server.map((span) => span.name)).toEqual(['GET /v2/products/:id']);
    const trace = collector.spans.filter((span) => span.traceId === server[0]!.traceId);
    const scopes = new Set(trace.map((span) => span.scope.replace('@opentelemetry/instrumentation-', '')));
    expect([...scopes].sort()).toEqual(['express', 'http', 'ioredis', 'pg']);
  });

  it('traces no probe', () => {
    expect(collector.spans.filter((span) => span.attributes['url.path'] === '/healthz')).toEqual([]);
  });
});
