// The contract for people and tools, served by the process itself with nothing fetched from
// elsewhere: `/openapi.json` and `/asyncapi.json` (the bundled documents), `/docs` (Redoc renders
// the OpenAPI document) and `/docs/stream` (AsyncAPI's React component renders the AsyncAPI
// document). The renderers' scripts are read from their installed packages at start, so the docs
// work offline and in the deployed bundle.
//
// Every resource is built once and carries a strong ETag (a hash of its bytes); the one writer
// (exchange.ts, sendResource) answers a request whose If-None-Match holds it with 304 and no body. Documents and pages are revalidated on every use
// (`no-cache`); the renderers' assets are named by their hash and kept for a year (`immutable`).
// The pages carry a Content-Security-Policy that lets them load from this origin only, and ask for
// nothing elsewhere: Redoc's sidebar footer would load its vendor's logo from cdn.redoc.ly (no
// option turns it off), so the served bundle names an empty inline image instead.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { StaticResource } from './exchange.ts';

/**
 * Same-origin only; inline styles (both renderers use them), Redoc's search worker (a blob), and
 * on the stream page `eval` (the AsyncAPI parser compiles its JSON Schema validators at run time).
 */
const pagePolicy = (evaluates: boolean) => [
  "default-src 'self'",
  `script-src 'self' 'unsafe-inline' blob:${evaluates ? " 'unsafe-eval'" : ''}`,
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
].join('; ');

type Json = Record<string, unknown>;

const require = createRequire(import.meta.url);
const REVALIDATE = 'no-cache';
const IMMUTABLE = 'public, max-age=31536000, immutable';

function resource(contentType: string, body: Buffer | string, cacheControl: string, headers?: Record<string, string>): StaticResource {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const etag = `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;
  return { contentType, body: bytes, etag, cacheControl, ...(headers === undefined ? {} : { headers }) };
}

/** Every docs resource by path. */
export function docsResources(openapi: Json, asyncapi: Json): Map<string, StaticResource> {
  const assets = {
    redoc: resource('text/javascript; charset=utf-8', withoutVendorLogo(readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8')), IMMUTABLE),
    asyncapi: resource('text/javascript; charset=utf-8', readFileSync(require.resolve('@asyncapi/react-component/browser/standalone/index.js')), IMMUTABLE),
    asyncapiCss: resource('text/css; charset=utf-8', readFileSync(require.resolve('@asyncapi/react-component/styles/default.min.css')), IMMUTABLE),
  };
  const assetPath = (name: keyof typeof assets, extension: string) => `/docs/assets/${name}-${assets[name].etag.slice(1, 13)}.${extension}`;
  const paths = { redoc: assetPath('redoc', 'js'), asyncapi: assetPath('asyncapi', 'js'), asyncapiCss: assetPath('asyncapiCss', 'css') };
  const title = esc(String((openapi['info'] as Json | undefined)?.['title'] ?? 'API'));
  const streamTitle = esc(String((asyncapi['info'] as Json | undefined)?.['title'] ?? 'Price stream'));

  const docs = page(
    title,
    '',
    `<redoc spec-url="/openapi.json" hide-hostname="true"></redoc><script src="${paths.redoc}"></script>`,
  );
  const stream = page(
    streamTitle,
    `<link rel="stylesheet" href="${paths.asyncapiCss}">`,
    `<div id="asyncapi"></div><script src="${paths.asyncapi}"></script>
<script>AsyncApiStandalone.render({ schema: { url: '/asyncapi.json', options: { method: 'GET' } }, config: { show: { sidebar: true } } }, document.getElementById('asyncapi'));</script>`,
  );
  return new Map([
    ['/openapi.json', resource('application/json; charset=utf-8', JSON.stringify(openapi), REVALIDATE)],
    ['/asyncapi.json', resource('application/json; charset=utf-8', JSON.stringify(asyncapi), REVALIDATE)],
    ['/docs', resource('text/html; charset=utf-8', docs, REVALIDATE, { 'content-security-policy': pagePolicy(false) })],
    ['/docs/stream', resource('text/html; charset=utf-8', stream, REVALIDATE, { 'content-security-policy': pagePolicy(true) })],
    [paths.redoc, assets.redoc],
    [paths.asyncapi, assets.asyncapi],
    [paths.asyncapiCss, assets.asyncapiCss],
  ]);
}

const VENDOR_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>')}`;

/** Redoc's bundle with its footer logo inlined (empty); a Redoc that no longer names it is served as is. */
function withoutVendorLogo(script: string): string {
  return script.replaceAll(VENDOR_LOGO, EMPTY_IMAGE);
}

function page(title: string, head: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">${head}
<style>body{margin:0;font-family:system-ui,sans-serif}nav.contract{padding:.5rem 1rem;border-bottom:1px solid #ddd;font-size:.9rem}nav.contract a{margin-right:1rem}</style></head>
<body><nav class="contract"><a href="/docs">HTTP API</a><a href="/docs/stream">Price stream</a><a href="/openapi.json">openapi.json</a><a href="/asyncapi.json">asyncapi.json</a></nav>
${body}</body></html>`;
}

function esc(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}
