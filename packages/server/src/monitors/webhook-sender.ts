// Sends one signed delivery to a monitor's endpoint over node:http(s): the transport of the
// `priceChanged` webhook. Signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`,
// `webhook-signature`: v1, HMAC-SHA256 of id.timestamp.body with the secret's base64 key) by
// signWebhook below, on node:crypto: the `standardwebhooks` package signs with a SHA-256 written in
// JavaScript, several times the cost of the whole signing here on the delivery's hot path. Its
// output is the package's, byte for byte (webhook-sender.test.ts checks them against each other;
// receivers verify with the package or the client's verifyWebhook).
//
// Guarantees and limits:
// - SSRF: unless `allowPrivateEndpoints`, a host that is, or resolves to, a loopback, private,
//   link-local, CGNAT, multicast or unspecified address is refused before a connection is made.
//   The check is in the socket's own DNS look-up, so the address checked is the address connected
//   to (a name that resolves differently on a second look-up cannot slip past). Redirects are not
//   followed (a 3xx is a failed attempt);
// - an attempt that has no complete answer within `timeoutMs` (connect, headers and body) fails;
// - at most `endpointConcurrency` attempts run at once per endpoint (scheme, host, port); more wait
//   their turn in this process; connections are kept alive between attempts (at most
//   `endpointConcurrency` per endpoint), so a kept connection goes to the address checked when it
//   was made, and one the receiver closed while idle fails that attempt, which is retried;
// - the answer's body is read and dropped (at most 64 KiB are read).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createHmac } from 'node:crypto';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface WebhookSenderOptions {
  timeoutMs: number;
  endpointConcurrency: number;
  allowPrivateEndpoints: boolean;
}

export interface WebhookAttempt {
  url: string;
  secret: string;
  messageId: string;
  body: string;
  /** The attempt's time, signed as `webhook-timestamp`. */
  at: number;
}

/** What the receiver's answer means (the contract's `priceChanged` responses). */
export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'gone'; status: 410 }
  | { outcome: 'failed'; reason: string; status?: number; retryAfter?: string };

/** Addresses no delivery goes to unless private endpoints are allowed. */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) PRIVATE.addSubnet(network, prefix, 'ipv6');

/** Whether deliveries to `address` (an IP address) are refused as private. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

class PrivateEndpoint extends Error {
  constructor(address: string) {
    super(`the endpoint resolves to ${address}, a loopback, private or link-local address; deliveries there are refused (serve --monitor-private-endpoints allow permits them)`);
  }
}

/** dns.lookup, refusing private addresses: the socket connects only to an address checked here. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error !== null) return callback(error, '', 0);
    const refused = addresses.find((entry) => isPrivateAddress(entry.address));
    if (refused !== undefined) return callback(Object.assign(new PrivateEndpoint(refused.address), { code: 'EPRIVATE' }), '', 0);
    if (options.all === true) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
    const [first] = addresses;
    if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
    callback(null, first.address, first.family);
  });
};

const MAX_ANSWER_BYTES = 64 * 1024;

export class WebhookSender {
  readonly #options: WebhookSenderOptions;
  readonly #slots = new Map<string, { busy: number; waiting: (() => void)[] }>();
  readonly #agents: { http: HttpAgent; https: HttpsAgent };

  constructor(options: WebhookSenderOptions) {
    this.#options = options;
    // An idle connection is closed before a receiver with Node's default keep-alive (5 s) would close it.
    const agentOptions = { keepAlive: true, maxSockets: options.endpointConcurrency, timeout: 4_000 };
    this.#agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  }

  /** Closes the kept connections. */
  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }

  /** Signs and POSTs one attempt; never throws: every failure is a result with its reason. */
  async send(attempt: WebhookAttempt): Promise<AttemptResult> {
    let url: URL;
    try {
      url = new URL(attempt.url);
    } catch {
      return { outcome: 'failed', reason: `the URL "${attempt.url}" cannot be parsed` };
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.#options.allowPrivateEndpoints && isIP(host) !== 0 && isPrivateAddress(host)) return { outcome: 'failed', reason: new PrivateEndpoint(host).message };
    const release = await this.#slot(url.origin);
    try {
      return await this.#post(url, attempt);
    } finally {
      release();
    }
  }

  #post(url: URL, attempt: WebhookAttempt): Promise<AttemptResult> {
    const signature = signWebhook(attempt.secret, attempt.messageId, attempt.at, attempt.body);
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(attempt.body)),
      'user-agent': 'catalog-price-monitors/1',
      'webhook-id': attempt.messageId,
      'webhook-timestamp': String(Math.floor(attempt.at / 1000)),
      'webhook-signature': signature,
    };
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    const { timeoutMs } = this.#options;
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      /** `ended`: the answer was read to its end, and the connection may serve the next attempt. */
      const finish = (result: AttemptResult, ended = false): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!ended) request.destroy();
        resolve(result);
      };
      const timer = setTimeout(() => finish({ outcome: 'failed', reason: `no answer within ${timeoutMs} ms` }), timeoutMs);
      const request = send(url, { method: 'POST', headers, agent: https ? this.#agents.https : this.#agents.http, ...(this.#options.allowPrivateEndpoints ? {} : { lookup: guardedLookup }) }, (response: IncomingMessage) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        response.on('error', () => {});
        const status = response.statusCode ?? 0;
        const result = resultOf(status, response.headers['retry-after']);
        response.on('end', () => finish(result, true));
        response.on('close', () => finish(result));
      });
      request.on('error', (error: NodeJS.ErrnoException) => finish({ outcome: 'failed', reason: reasonOf(error) }));
      request.end(attempt.body);
    });
  }

  /** Waits for one of the endpoint's slots; resolves with its release. */
  async #slot(origin: string): Promise<() => void> {
    let slots = this.#slots.get(origin);
    if (slots === undefined) this.#slots.set(origin, (slots = { busy: 0, waiting: [] }));
    const endpoint = slots;
    if (endpoint.busy >= this.#options.endpointConcurrency) await new Promise<void>((resolve) => endpoint.waiting.push(resolve));
    else endpoint.busy += 1;
    return () => {
      const next = endpoint.waiting.shift();
      if (next !== undefined) next();
      else if (--endpoint.busy === 0) this.#slots.delete(origin);
    };
  }
}

/** The Standard Webhooks `webhook-signature` of a message (`v1,` and the HMAC-SHA256 in base64); `at` in epoch ms, signed in whole seconds. */
export function signWebhook(secret: string, messageId: string, at: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${Math.floor(at / 1000)}.${body}`).digest('base64')}`;
}

function resultOf(status: number, retryAfter: string | undefined): AttemptResult {
  if (status >= 200 && status < 300) return { outcome: 'delivered', status };
  if (status === 410) return { outcome: 'gone', status };
  return { outcome: 'failed', reason: `HTTP ${status}`, status, ...((status === 429 || status === 503) && retryAfter !== undefined ? { retryAfter } : {}) };
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset before an answer',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name did not resolve in time',
};

function reasonOf(error: NodeJS.ErrnoException): string {
  if (error instanceof PrivateEndpoint) return error.message;
  const known = error.code === undefined ? undefined : REASONS[error.code];
  return known ?? (error.code === undefined ? error.message : `${error.code}: ${error.message}`);
}
