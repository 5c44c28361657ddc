// Run by tracing.integration.test.ts as its own process (`node traced-request.ts <postgres-url>
// <redis-url>`), because the service's loading path is what is under test: tracing starts first,
// then express, pg and ioredis are imported by bare specifier, as the service's entries do (vitest
// would import them by path). One request to /v2/products/:id with an X-Request-Id; prints the
// finished spans as one JSON array on stdout.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startTracing, traceRequestId } from '../../src/tracing.ts';

export interface PrintedSpan {
  traceId: string;
  name: string;
  kind: number;
  scope: string;
  service: unknown;
  attributes: Record<string, unknown>;
}

const [postgresUrl, redisUrl] = process.argv.slice(2);
if (postgresUrl === undefined || redisUrl === undefined) throw new Error('usage: traced-request.ts <postgres-url> <redis-url>');

const exporter = new InMemorySpanExporter();
const tracing = await startTracing({ enabled: true, exporter });
const [{ default: express }, { default: pg }, { Redis }, http] = await Promise.all([import('express'), import('pg'), import('ioredis'), import('node:http')]);

const pool = new pg.Pool({ connectionString: postgresUrl, max: 1 });
const redis = new Redis(redisUrl, { keyPrefix: `tracing-test:${randomBytes(6).toString('hex')}:` });
const app = express();
app.use((req, res, next) => {
  const requestId = req.get('x-request-id') ?? 'generated';
  traceRequestId(req, requestId);
  res.set('x-request-id', requestId);
  next();
});
app.get('/v2/products/:id', async (req, res) => {
  const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
  const cached = await redis.get(`product:${req.params.id}`);
  res.json({ one: rows[0]?.one, cached });
});
const server = http.createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
try {
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/v2/products/42`, { headers: { 'x-request-id': 'trace-me-42' } });
  const body = JSON.stringify(await response.json());
  if (body !== '{"one":1,"cached":null}') throw new Error(`unexpected answer ${response.status} ${body}`);
} finally {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await pool.end();
  redis.disconnect();
}
await tracing.forceFlush();
const spans: PrintedSpan[] = exporter.getFinishedSpans().map((span) => ({
  traceId: span.spanContext().traceId,
  name: span.name,
  kind: span.kind,
  scope: span.instrumentationScope.name,
  service: span.resource.attributes['service.name'],
  attributes: span.attributes,
}));
process.stdout.write(`${JSON.stringify(spans)}\n`);
await tracing.shutdown();
