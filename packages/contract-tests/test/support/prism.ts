// Prism as a test fixture: `mock` serves the OpenAPI document from its examples, `proxy` forwards to a
// live server and validates both directions. Prism reports what it finds in an `sl-violations`
// response header; `fetch` here records every one. Prism is a separate process bound to 127.0.0.1 on
// a free port; startup takes a few seconds, so start it once per file (beforeAll) and stop it in
// afterAll. A Prism that exits early or never answers fails `startPrism` with its output.
//
// Prism serves a private copy of the document: it watches the file it was given and restarts its
// listener when the file changes, which would reset every connection open at that moment if
// specs/dist were bundled again while tests run (a `pnpm generate` beside them).
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { OPENAPI_PATH, REPO_ROOT } from './spec.ts';

const CANDIDATE_BINS = [
  join(REPO_ROOT, 'packages/contract-tests/node_modules/.bin/prism'),
  join(REPO_ROOT, 'node_modules/.bin/prism'),
  join(REPO_ROOT, 'specs/node_modules/.bin/prism'),
];

export interface Violation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

interface RecordedExchange {
  method: string;
  url: string;
  status: number;
  violations: Violation[];
}

export interface Prism {
  url: string;
  /** Every exchange sent through `fetch`, with the violations Prism reported for it. */
  exchanges: RecordedExchange[];
  fetch(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export function parseViolations(header: string | null): Violation[] {
  if (header === null || header === '') return [];
  try {
    return JSON.parse(header) as Violation[];
  } catch {
    return [{ location: ['sl-violations'], severity: 'Error', code: 'unparseable', message: header }];
  }
}

/** Violations about the response (not the request): these mean the server broke the contract. */
export function responseViolations(violations: Violation[]): Violation[] {
  return violations.filter((v) => v.location[0] !== 'request');
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveStop();
    });
    child.kill('SIGTERM');
  });
}

export type PrismMode = { mode: 'mock' } | { mode: 'proxy'; upstream: string };

export async function startPrism(options: PrismMode, spec: string = OPENAPI_PATH): Promise<Prism> {
  const bin = CANDIDATE_BINS.find((path) => existsSync(path));
  if (bin === undefined) throw new Error(`prism is not installed (looked in ${CANDIDATE_BINS.join(', ')})`);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'prism-'));
  const document = join(dir, basename(spec));
  copyFileSync(spec, document);
  const args = options.mode === 'mock' ? ['mock', document] : ['proxy', document, options.upstream];
  const child = spawn(bin, [...args, '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`prism exited with ${child.exitCode}:\n${output}`);
    }
    if (/Prism is listening/.test(output)) break;
    if (Date.now() > deadline) {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`prism did not start within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // A Prism that dies while a test is using it leaves only ECONNRESET/ECONNREFUSED in the test's
  // failure; its own last words are the diagnosis, so they go to stderr.
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping) process.stderr.write(`prism on ${url} exited (code ${code}, signal ${signal}) while in use:\n${output.slice(-4000)}\n`);
  });
  const exchanges: RecordedExchange[] = [];
  return {
    url,
    exchanges,
    async fetch(path, init = {}) {
      const response = await fetch(`${url}${path}`, init);
      exchanges.push({
        method: init.method ?? 'GET',
        url: path,
        status: response.status,
        violations: parseViolations(response.headers.get('sl-violations')),
      });
      return response;
    },
    async stop() {
      stopping = true;
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The header that picks a `prism proxy`'s upstream when it proxies to an {@link UpstreamSwitch}. */
export const UPSTREAM_HEADER = 'X-Test-Upstream';

export interface UpstreamSwitch {
  url: string;
  close(): Promise<void>;
}

/**
 * One upstream for one `prism proxy` in front of several servers: each request goes to the base URL
 * its X-Test-Upstream header names (Prism forwards the header), or to `fallback` without one. Bytes
 * pass through unchanged both ways, so Prism judges each server's own answers.
 */
export async function startUpstreamSwitch(upstreams: Record<string, string>, fallback: string): Promise<UpstreamSwitch> {
  const server = createHttpServer((req, res) => {
    const name = req.headers[UPSTREAM_HEADER.toLowerCase()];
    const base = upstreams[typeof name === 'string' ? name : fallback];
    if (base === undefined) {
      res.writeHead(502).end(`no upstream named ${String(name)}`);
      return;
    }
    const forwarded = request(new URL(req.url ?? '/', base), { method: req.method, headers: req.rawHeaders }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
