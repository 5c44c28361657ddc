// A minimal keep-alive HTTP client for sequential latency samples: one socket, no parsing beyond
// collecting the body, so the client adds as little as possible to what is measured.
import { Agent, request } from 'node:http';

export interface HttpResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

export async function get(url: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${url} timed out`)));
    req.end();
  });
}

/** GET that must answer 200; returns the parsed JSON body. */
export async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const response = await get(url, headers);
  if (response.status !== 200) {
    throw new Error(`GET ${url} answered ${response.status}: ${response.body.toString('utf8').slice(0, 300)}`);
  }
  return JSON.parse(response.body.toString('utf8')) as T;
}

export function closeClient(): void {
  agent.destroy();
}
