import { describe, expect, it } from 'vitest';
import { lastWordOf, parseTables } from '../../src/http/kernel-send-queue.ts';

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
});
