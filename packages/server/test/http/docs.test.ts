// http/docs.ts on its own: the resources the docs routes serve, as sendResource answers with them
// (operational-routes.test.ts fetches them through the app).
import { createHash } from 'node:crypto';
import { asyncapiDocument, openapiDocument } from '@catalog/contract/documents';
import { describe, expect, it } from 'vitest';
import { docsResources } from '../../src/http/docs.ts';
import type { StaticResource } from '../../src/http/exchange.ts';

const html = (resource: StaticResource | undefined): string => resource!.body.toString('utf8');
const assetsNamedIn = (page: string): string[] => [...page.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((match) => match[1]!);

describe('docsResources', () => {
  it('lets the pages load from this origin only, and only the stream page evaluate code', () => {
    const resources = docsResources(openapiDocument, asyncapiDocument);
    const sameOrigin = (script: string) =>
      `default-src 'self'; ${script}; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'`;
    expect(resources.get('/docs')!.headers).toEqual({ 'content-security-policy': sameOrigin("script-src 'self' 'unsafe-inline' blob:") });
    expect(resources.get('/docs/stream')!.headers).toEqual({ 'content-security-policy': sameOrigin("script-src 'self' 'unsafe-inline' blob: 'unsafe-eval'") });
  });

  it('tags every resource with a strong ETag: a 27-character prefix of the SHA-256 of its bytes', () => {
    for (const [path, resource] of docsResources(openapiDocument, asyncapiDocument)) {
      expect(resource.etag, path).toMatch(/^"[\w-]{27}"$/);
      expect(createHash('sha256').update(resource.body).digest('base64url').startsWith(resource.etag.slice(1, -1)), path).toBe(true);
    }
  });

  it('names each renderer asset by its hash and file type, and serves it with that type for good', () => {
    const resources = docsResources(openapiDocument, asyncapiDocument);
    const assets = [...resources].filter(([path]) => path.startsWith('/docs/assets/'));
    for (const [path, resource] of assets) expect(path).toContain(`-${resource.etag.slice(1, 13)}.`);
    expect(assets.map(([path, resource]) => [path.replace(/-[\w-]{12}\./, '-<hash>.'), resource.contentType, resource.cacheControl])).toEqual([
      ['/docs/assets/redoc-<hash>.js', 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'],
      ['/docs/assets/asyncapi-<hash>.js', 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'],
      ['/docs/assets/asyncapiCss-<hash>.css', 'text/css; charset=utf-8', 'public, max-age=31536000, immutable'],
    ]);
  });

  it("renders each page's document with its own renderer, the stream page styled by its stylesheet", () => {
    const resources = docsResources(openapiDocument, asyncapiDocument);
    const [redoc, asyncapi, asyncapiCss] = [...resources.keys()].filter((path) => path.startsWith('/docs/assets/'));
    const docs = html(resources.get('/docs'));
    expect(assetsNamedIn(docs)).toEqual([redoc]);
    expect(docs).toContain(`<redoc spec-url="/openapi.json" hide-hostname="true"></redoc><script src="${redoc}"></script>`);
    const stream = html(resources.get('/docs/stream'));
    expect(assetsNamedIn(stream)).toEqual([asyncapiCss, asyncapi]);
    expect(stream).toContain(`<link rel="stylesheet" href="${asyncapiCss}">`);
    expect(stream).toContain(`<div id="asyncapi"></div><script src="${asyncapi}"></script>`);
    expect(stream).toContain("AsyncApiStandalone.render({ schema: { url: '/asyncapi.json'");
  });

  it("shows no text in either page's head but its title", () => {
    const resources = docsResources(openapiDocument, asyncapiDocument);
    for (const path of ['/docs', '/docs/stream']) {
      const head = /<head>([\s\S]*)<\/head>/.exec(html(resources.get(path)))![1]!;
      expect(head.replace(/<title>[^<]*<\/title>|<style>[^<]*<\/style>|<[^>]*>/g, '').trim(), path).toBe('');
    }
  });

  it("titles each page after its document's title, escaped for HTML", () => {
    const resources = docsResources({ info: { title: 'Prices & <Stock> "Feed"' } }, { info: { title: 'Ticks & "<Live>"' } });
    expect(html(resources.get('/docs'))).toContain('<title>Prices &amp; &lt;Stock&gt; &quot;Feed&quot;</title>');
    expect(html(resources.get('/docs/stream'))).toContain('<title>Ticks &amp; &quot;&lt;Live&gt;&quot;</title>');
  });

  it('titles the pages API and Price stream for documents without info', () => {
    const resources = docsResources({}, {});
    expect(html(resources.get('/docs'))).toContain('<title>API</title>');
    expect(html(resources.get('/docs/stream'))).toContain('<title>Price stream</title>');
  });
});
