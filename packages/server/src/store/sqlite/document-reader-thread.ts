// A document reader thread's entry (document-readers.ts): one read-only connection to the catalog
// file, one page read per message, its bytes transferred back. A failure to open throws, which
// the API thread sees as the thread's error.
// It opens the file itself rather than through SqliteDatabase, whose migrations it has no use for
// (the API thread applied them before starting it) and would load at every start.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import type { PageRead, PageReply } from './document-readers.ts';
import { applyCatalogReadSettings, BUSY_TIMEOUT_MS } from './sqlite-settings.ts';
import { readStorefrontPage, STOREFRONT_PAGE_SQL } from './storefront-pages.ts';

const port = parentPort;
if (port === null) throw new Error('document-reader-thread.ts runs as a worker thread; DocumentReaders starts it with the first read');
const database = new DatabaseSync((workerData as { path: string }).path, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
applyCatalogReadSettings(database);
const statement = database.prepare(STOREFRONT_PAGE_SQL);
const reply = (message: PageReply, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
port.on('message', ({ id, cursors }: PageRead) => {
  try {
    const page = readStorefrontPage(statement, cursors);
    reply({ id, page }, [page.buffer as ArrayBuffer]);
  } catch (error) {
    reply({ id, error: (error as Error).message });
  }
});
reply({ type: 'ready' });
