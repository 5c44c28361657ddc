import { resolve } from 'node:path';

// Storage URLs name an engine and where it lives: `sqlite:<path>`, `postgres://…`, `redis://…`.

/** The SQLite file path of a `sqlite:` URL (`sqlite:./data/catalog.db`, `sqlite:///abs/path.db`, `sqlite::memory:`), resolved against the working directory. */
export function sqlitePath(url: string): string {
  let rest = url.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest === '') throw new Error(`"${url}" names no database file; use sqlite:<path>`);
  return resolve(rest);
}
