// The docs as a reader sees them (issue 17 item 1): `catalog serve`'s /docs and /docs/stream in
// headless Chromium (Debian's `chromium`, driven by playwright-core). Every operation and webhook of the
// OpenAPI document and the stream's Topics, Last-Event-ID and reset must be on screen, with no
// page error; nothing may be requested from anywhere but the server (not even a request the
// Content-Security-Policy then blocks), and the policy reports no violation. Sidebar headings are
// text, never markup shown raw.
import { execFileSync } from 'node:child_process';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, serve, type Workspace, workspace } from './support/server.ts';
import { openapi, operations } from './support/spec.ts';

/** Every operation's (or webhook's) summary in a section of the document, as Redoc shows it in its menu and headings. */
const summariesOf = (section: 'paths' | 'webhooks'): string[] =>
  Object.values((openapi[section] ?? {}) as Record<string, Record<string, { summary?: string }>>).flatMap((item) =>
    Object.values(item).flatMap((op) => (typeof op === 'object' && op !== null && typeof op.summary === 'string' ? [op.summary] : [])),
  );
const SUMMARIES = summariesOf('paths');
/** Redoc heads a webhook with its summary and a "Webhook" badge. */
const WEBHOOK_SUMMARIES = summariesOf('webhooks');

let ws: Workspace;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  ws = workspace('docs');
  server = await serve(`sqlite:${ws.dir}/catalog.db`);
  const executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  ws?.dispose();
});

/** Opens `path` and records every request the page makes and every error it raises. */
async function open(path: string): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  // Every request the page attempts, those its Content-Security-Policy blocks included.
  page.on('request', (request) => requests.push(request.url()));
  page.on('requestfailed', (request) => errors.push(`${request.url()}: ${request.failure()?.errorText}`));
  page.on('pageerror', (error) => errors.push(error.message));
  // A CSP violation is logged as a console error, so it counts like any other.
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(`${server.apiUrl}${path}`, { waitUntil: 'load' });
  return { page, requests, errors };
}

function foreign(requests: readonly string[]): string[] {
  const origin = new URL(server.apiUrl).origin;
  return requests.filter((url) => !url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:'));
}

describe('the docs in a browser', () => {
  it('/docs renders every operation of the OpenAPI document with Redoc, from this server alone', async () => {
    const { page, requests, errors } = await open('/docs');
    expect(SUMMARIES.length, 'every operation of specs/openapi/openapi.yaml needs a summary, which Redoc shows').toBe(Object.keys(operations).length);
    expect(WEBHOOK_SUMMARIES.length, 'every webhook of specs/openapi/openapi.yaml needs a summary, which Redoc shows').toBe(Object.keys(openapi['webhooks'] as object).length);
    for (const summary of WEBHOOK_SUMMARIES) await page.getByText(summary).filter({ visible: true }).first().waitFor({ timeout: 30_000 });
    for (const summary of SUMMARIES) {
      await page.getByText(summary, { exact: true }).filter({ visible: true }).first().waitFor({ timeout: 30_000 });
    }
    // Markdown of the descriptions is rendered, not shown raw.
    expect(await page.locator('h2', { hasText: 'Plans' }).count()).toBeGreaterThan(0);
    expect(await page.content()).not.toContain('## Plans');
    // Headings in the sidebar are text: no tag of their Markdown's rendering is shown raw.
    const menu = await page.locator('[role="menu"] label, [role="menuitem"]').allInnerTexts();
    expect(menu.length).toBeGreaterThan(SUMMARIES.length);
    expect(menu.filter((text) => /<\/?[a-z]+>/i.test(text))).toEqual([]);
    // Redoc's footer logo has loaded by now, or never will: give the page a moment to ask for it.
    await page.waitForLoadState('networkidle');
    expect(errors).toEqual([]);
    expect(foreign(requests)).toEqual([]);
    expect(requests.some((url) => url.endsWith('/openapi.json'))).toBe(true);
    await page.close();
  }, 60_000);

  it('/docs/stream renders the AsyncAPI document: Topics, Filter, Last-Event-ID and reset, from this server alone', async () => {
    const { page, requests, errors } = await open('/docs/stream');
    for (const text of ['Topics', 'Filter', 'Last-Event-ID', 'reset']) {
      await page.getByText(text).filter({ visible: true }).first().waitFor({ timeout: 30_000 });
    }
    expect(errors).toEqual([]);
    expect(foreign(requests)).toEqual([]);
    expect(requests.some((url) => url.endsWith('/asyncapi.json'))).toBe(true);
    await page.close();
  }, 60_000);
});
