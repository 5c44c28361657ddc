import { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KernelSendQueues, lastWordOf, parseTables } from '../../src/http/kernel-send-queue.ts';

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F91 0100007F:D8B2 01 00007D40:00000000 01:00000014 00000000     0        0 123 1 0000000000000000 20 4 30 10 -1
   1: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 124 1 0000000000000000 100 0 0 10 0
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:1F91 0000000000000000FFFF00000500000A:C350 01 00001000:00000000 00:00000000 00000000     0        0 125 1
   1: 00000000000000000000000001000000:1F91 00000000000000000000000001000000:C351 01 00000200:00000000 00:00000000 00000000     0        0 126 1
`;

describe('kernel send queues from /proc/net/tcp and tcp6', () => {
  it("reads each established socket's tx_queue by local port, remote port and remote address", () => {
    const table = parseTables([TCP, TCP6]);
    expect(table.get(`8081:55474:${lastWordOf('127.0.0.1')}`)).toBe(0x7d40);
    expect(table.get(`8081:50000:${lastWordOf('::ffff:10.0.0.5')}`)).toBe(0x1000);
    expect(table.get(`8081:50001:${lastWordOf('::1')}`)).toBe(0x200);
    expect(table.get(`8081:55474:${lastWordOf('127.0.0.2')}`)).toBeUndefined();
  });

  it('matches a peer by the last 32 bits of its address: IPv4 of any octets, IPv6 compressed or written out', () => {
    const table = parseTables([
      `${TCP.split('\n')[0]}\n   0: 0100007F:1F91 C80AA8C0:D8B2 01 00000300:00000000 01:00000014 00000000     0        0 127 1\n`,
      `${TCP6.split('\n')[0]}\n   0: 00000000000000000000000001000000:1F91 B80D012000000000000000000D0C0B0A:C350 01 00000400:00000000 00:00000000 00000000     0        0 128 1\n`,
    ]);
    expect(table.get(`8081:55474:${lastWordOf('192.168.10.200')}`)).toBe(0x300);
    expect(table.get(`8081:50000:${lastWordOf('2001:db8::a0b:c0d')}`)).toBe(0x400);
    expect(table.get(`8081:50000:${lastWordOf('2001:db8:1:2:3:4:a0b:c0d')}`)).toBe(0x400);
  });

  it('skips header and blank lines and rows not in the kernel format, and reads a row by its first five fields', () => {
    const text = [
      TCP.split('\n')[0],
      '',
      '   0: 0100007F:1F91 0100007F:D8B2 01 00000010:00000000',
      '   1: 0100007F:1F92', // cut short
      '   2: 0100007F 0100007F:D8B3 01 00000020:00000000 00:00000000 00000000', // no local port
      '   3: 0100007F:1F93 0100007F 01 00000030:00000000 00:00000000 00000000', // no remote port
      'x 0100007F:1F94 0100007F:D8B4 01 00000040:00000000 00:00000000 00000000', // no slot number
    ].join('\n');
    expect(parseTables([text])).toEqual(new Map([[`8081:55474:${lastWordOf('127.0.0.1')}`, 0x10]]));
  });
});

describe('KernelSendQueues', () => {
  afterEach(() => vi.useRealTimers());
  const row = (txQueue: number) => `   0: 0100007F:1F91 0100007F:D8B2 01 ${txQueue.toString(16).padStart(8, '0')}:00000000 01:00000014 00000000     0        0 123 1\n`;
  const peer = { localPort: 8081, remotePort: 55474, remoteAddress: '127.0.0.1' } as unknown as Socket;

  it('reads the tables again only once a second has passed since it last read them', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    let queued = 0x100;
    const read = vi.fn(() => [row(queued)]);
    const queues = new KernelSendQueues(read);
    expect(queues.bytes(peer)).toBe(0x100);
    queued = 0x200;
    vi.advanceTimersByTime(999);
    expect(queues.bytes(peer)).toBe(0x100);
    vi.advanceTimersByTime(1);
    expect(queues.bytes(peer)).toBe(0x200);
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('counts 0 for a socket with no peer', () => {
    expect(new KernelSendQueues(() => [TCP, TCP6]).bytes(new Socket())).toBe(0);
  });
});
