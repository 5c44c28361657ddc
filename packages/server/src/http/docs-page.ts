// A self-contained HTML rendering of the OpenAPI document for people: every operation with its
// parameters and responses, then every schema. No scripts, no external assets; built once.
type Json = Record<string, unknown>;

export function renderDocsPage(document: Json): string {
  const info = (document['info'] ?? {}) as Json;
  const paths = (document['paths'] ?? {}) as Record<string, Json>;
  const components = (document['components'] ?? {}) as Json;
  const schemas = (components['schemas'] ?? {}) as Record<string, Json>;
  const parts: string[] = [];
  parts.push(`<h1>${esc(String(info['title'] ?? 'API'))} <small>${esc(String(info['version'] ?? ''))}</small></h1>`);
  parts.push(`<pre class="prose">${esc(String(info['description'] ?? ''))}</pre>`);
  parts.push('<h2>Operations</h2>');
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (typeof raw !== 'object' || raw === null || !('responses' in raw)) continue;
      parts.push(renderOperation(document, method, path, raw as Json));
    }
  }
  parts.push('<h2>Schemas</h2>');
  for (const [name, schema] of Object.entries(schemas)) parts.push(renderSchema(document, name, schema));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(String(info['title'] ?? 'API'))}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>
<body><main>${parts.join('\n')}<p><a href="/openapi.json">The OpenAPI document as JSON</a></p></main></body></html>`;
}

function renderOperation(document: Json, method: string, path: string, operation: Json): string {
  const id = String(operation['operationId'] ?? `${method} ${path}`);
  const params = ((operation['parameters'] ?? []) as Json[]).map((p) => resolve(document, p));
  const rows = params
    .map((p) => {
      const schema = resolve(document, (p['schema'] ?? {}) as Json);
      return `<tr><td><code>${esc(String(p['name']))}</code></td><td>${esc(String(p['in']))}</td><td>${p['required'] === true ? 'yes' : 'no'}</td><td>${esc(describeSchema(document, schema))}</td><td>${esc(String(p['description'] ?? ''))}</td></tr>`;
    })
    .join('');
  const responses = Object.entries((operation['responses'] ?? {}) as Record<string, Json>)
    .map(([status, raw]) => {
      const response = resolve(document, raw);
      const content = (response['content'] ?? {}) as Record<string, Json>;
      const media = Object.entries(content)
        .map(([type, body]) => `${type}: ${describeSchema(document, (body['schema'] ?? {}) as Json)}`)
        .join('; ');
      return `<tr><td>${esc(status)}</td><td>${esc(String(response['description'] ?? ''))}</td><td>${esc(media)}</td></tr>`;
    })
    .join('');
  const plans = Array.isArray(operation['x-plans']) ? `<p>Plans: ${esc((operation['x-plans'] as unknown[]).join(', '))}</p>` : '';
  return `<section id="${esc(id)}"><h3><span class="method">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code> — ${esc(id)}</h3>
<p><strong>${esc(String(operation['summary'] ?? ''))}</strong></p>${plans}<pre class="prose">${esc(String(operation['description'] ?? ''))}</pre>
${rows === '' ? '' : `<table><thead><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th><th>Description</th></tr></thead><tbody>${rows}</tbody></table>`}
<table><thead><tr><th>Status</th><th>Meaning</th><th>Body</th></tr></thead><tbody>${responses}</tbody></table></section>`;
}

function renderSchema(document: Json, name: string, raw: Json): string {
  const schema = resolve(document, raw);
  const properties = (schema['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((schema['required'] ?? []) as string[]);
  const rows = Object.entries(properties)
    .map(
      ([property, sub]) =>
        `<tr><td><code>${esc(property)}</code></td><td>${required.has(property) ? 'yes' : 'no'}</td><td>${esc(describeSchema(document, sub))}</td><td>${esc(String(resolve(document, sub)['description'] ?? ''))}</td></tr>`,
    )
    .join('');
  return `<section id="schema-${esc(name)}"><h3>${esc(name)}</h3><p>${esc(String(schema['description'] ?? schema['title'] ?? ''))}</p>
${rows === '' ? `<p>${esc(describeSchema(document, schema))}</p>` : `<table><thead><tr><th>Field</th><th>Required</th><th>Schema</th><th>Description</th></tr></thead><tbody>${rows}</tbody></table>`}</section>`;
}

function describeSchema(document: Json, schema: Json): string {
  const ref = schema['$ref'];
  if (typeof ref === 'string') return ref.split('/').pop() ?? ref;
  const bits: string[] = [];
  const type = schema['type'];
  if (Array.isArray(type)) bits.push(type.join(' | '));
  else if (typeof type === 'string') bits.push(type === 'array' ? `array of ${describeSchema(document, (schema['items'] ?? {}) as Json)}` : type);
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options)) bits.push(options.map((o) => describeSchema(document, o as Json)).join(' or '));
  }
  if (Array.isArray(schema['enum'])) bits.push(`one of ${(schema['enum'] as unknown[]).join(', ')}`);
  if (schema['const'] !== undefined) bits.push(`= ${JSON.stringify(schema['const'])}`);
  for (const key of ['format', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength', 'maxItems', 'default'] as const) {
    if (schema[key] !== undefined) bits.push(`${key} ${String(schema[key])}`);
  }
  return bits.join(', ') || 'any';
}

function resolve(document: Json, value: Json): Json {
  let current = value;
  for (let i = 0; i < 8 && typeof current['$ref'] === 'string' && current['$ref'].startsWith('#/'); i++) {
    let target: unknown = document;
    for (const segment of current['$ref'].slice(2).split('/')) target = (target as Json | undefined)?.[segment];
    if (typeof target !== 'object' || target === null) break;
    current = target as Json;
  }
  return current;
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:1rem 2rem}section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #e3e3e3;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f4f7}.method{background:#0b6bcb;color:#fff;border-radius:4px;padding:0 .4rem;font-size:.85em}
pre.prose{white-space:pre-wrap;font:inherit}code{font-family:ui-monospace,monospace}`;
