// One storefront page's documents from SQLite, as the JSON array the API sends: the one
// definition, used by the API thread itself and by the document reader threads
// (document-readers.ts).
import type { StatementSync } from 'node:sqlite';

/**
 * Joined by SQLite into one flat text, read as a BLOB: its UTF-8 bytes as they are, with no string
 * per document, no join in JavaScript and no string of the page to decode and re-encode. CROSS
 * JOIN makes the cursors the outer loop, so the documents reach group_concat in the order given
 * (an ORDER BY inside it would copy every document through a sorter). A cursor with no document is
 * left out.
 */
export const STOREFRONT_PAGE_SQL = `SELECT CAST('[' || coalesce(group_concat(d.doc, ','), '') || ']' AS BLOB) AS page
  FROM json_each(?) j CROSS JOIN storefront_documents d ON d.cursor = j.value`;

/** The cursors as the JSON array `readStorefrontPage` takes: exact integers (cursors are exact doubles). */
export function cursorList(cursors: readonly number[]): string {
  return `[${cursors.map((cursor) => BigInt(cursor)).join(',')}]`;
}

/**
 * The documents of `cursors` (a `cursorList`), in that order, as one JSON array's UTF-8 bytes, by
 * `statement` (STOREFRONT_PAGE_SQL prepared on the catalog).
 */
export function readStorefrontPage(statement: StatementSync, cursors: string): Uint8Array {
  return (statement.get(cursors) as { page: Uint8Array }).page;
}
