// A document reader thread's entry (document-readers.ts): one read-only connection to the catalog
// file, one page read per message, its bytes transferred back. A failure to open throws, which
// the API thread sees as the thread's error.
import { parentPort, workerData } from 'node:worker_threads';
import type { PageRead, PageReply } from './document-readers.ts';
import { SqliteDatabase } from './sqlite-database.ts';
import { readStorefrontPage } from './storefront-pages.ts';

const port = parentPort;
if (port === null) throw new Error('document-reader-thread.ts runs as a worker thread; start it with DocumentReaders.start()');
const database = new SqliteDatabase((workerData as { path: string }).path, { reader: true });
const reply = (message: PageReply, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
port.on('message', ({ id, cursors }: PageRead) => {
  try {
    const page = readStorefrontPage(database, cursors);
    reply({ id, page }, [page.buffer as ArrayBuffer]);
  } catch (error) {
    reply({ id, error: (error as Error).message });
  }
});
reply({ type: 'ready' });
