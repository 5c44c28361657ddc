// What the kernel still holds to send on a TCP socket: bytes written but not yet acknowledged by
// the peer (`tx_queue` in /proc/net/tcp and /proc/net/tcp6, Linux). Node exposes neither SIOCOUTQ
// nor SO_SNDBUF for TCP, so the tables are read instead: at most once per REFRESH_MS, and only
// when asked, which the stream's writer (event-stream-writer.ts) does only at a heartbeat, for a
// subscriber whose socket already refuses more bytes (some wait in the response's buffer).
//
// Limits: where /proc is missing (not Linux) every socket reads as 0, and the slow-consumer limit
// counts the process's own buffers only. Data the client's kernel has acknowledged is not held by
// this machine and is not counted. Sockets are matched by local port, remote port and remote
// address (IPv4 and IPv4-mapped exactly; other IPv6 peers by ports and the address's last 32 bits).
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

const REFRESH_MS = 1_000;
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];

export class KernelSendQueues {
  #table = new Map<string, number>();
  #readAt = Number.NEGATIVE_INFINITY;
  readonly #read: () => string[];

  /** `read` returns the tables' texts; for tests. */
  constructor(read: () => string[] = readTables) {
    this.#read = read;
  }

  /** Bytes the kernel holds unsent or unacknowledged for `socket`, as of at most REFRESH_MS ago. */
  bytes(socket: Socket): number {
    const now = performance.now();
    if (now - this.#readAt >= REFRESH_MS) {
      this.#readAt = now;
      this.#table = parseTables(this.#read());
    }
    if (socket.localPort === undefined || socket.remotePort === undefined || socket.remoteAddress === undefined) return 0;
    return this.#table.get(keyOf(socket.localPort, socket.remotePort, lastWordOf(socket.remoteAddress))) ?? 0;
  }
}

function readTables(): string[] {
  const texts: string[] = [];
  for (const table of TABLES) {
    try {
      texts.push(readFileSync(table, 'utf8'));
    } catch {
      // Not Linux, or no IPv6: nothing to count there.
    }
  }
  return texts;
}

const keyOf = (localPort: number, remotePort: number, remoteWord: number): string => `${localPort}:${remotePort}:${remoteWord}`;

/** Every established socket's send queue by key; header lines and unparsable rows are skipped. */
export function parseTables(texts: readonly string[]): Map<string, number> {
  const table = new Map<string, number>();
  for (const text of texts) {
    for (const line of text.split('\n')) {
      const fields = line.trim().split(/\s+/u);
      if (fields.length < 5 || !fields[0]!.endsWith(':')) continue;
      const [local, remote, , queues] = fields.slice(1, 5) as [string, string, string, string];
      const [, localPort] = local.split(':');
      const [remoteHex, remotePort] = remote.split(':');
      const [tx] = queues.split(':');
      if (localPort === undefined || remoteHex === undefined || remotePort === undefined || tx === undefined) continue;
      // The address is printed as 32-bit words in host byte order; the last word holds an IPv4
      // address (or the mapped one) as the kernel stores it.
      const word = Number.parseInt(remoteHex.slice(-8), 16) >>> 0;
      const key = keyOf(Number.parseInt(localPort, 16), Number.parseInt(remotePort, 16), word);
      table.set(key, Math.max(table.get(key) ?? 0, Number.parseInt(tx, 16)));
    }
  }
  return table;
}

/** The last 32 bits of an address, as /proc prints them on a little-endian machine. */
export function lastWordOf(address: string): number {
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/u.exec(address);
  if (v4 !== null) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    // Network order a.b.c.d, read as a little-endian 32-bit word.
    return ((d << 24) | (c << 16) | (b << 8) | a) >>> 0;
  }
  const groups = expandIpv6(address);
  const [high, low] = [groups[6] ?? 0, groups[7] ?? 0];
  const bytes = [high >> 8, high & 0xff, low >> 8, low & 0xff] as [number, number, number, number];
  return ((bytes[3] << 24) | (bytes[2] << 16) | (bytes[1] << 8) | bytes[0]) >>> 0;
}

function expandIpv6(address: string): number[] {
  const bare = address.split('%')[0]!;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const parse = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const front = parse(head);
  const back = parse(tail);
  return [...front, ...Array<number>(Math.max(0, 8 - front.length - back.length)).fill(0), ...back];
}
