// PostgresKeyStore: API keys as SHA-256 digests with their plan, in the `api_keys` table.
// Guarantees: the key itself is never stored; look-up is by digest, confirmed with a constant-time
// comparison; a revoked key is never found again. Failure modes: database unreachable →
// ServiceUnavailable.
import type pg from 'pg';
import type { Plan } from '../../catalog/model.ts';
import {
  digestKey,
  digestsEqual,
  generateApiKey,
  idPrefixOf,
  keyIdOf,
  LAST_USED_PRECISION_MS,
  type KeyAdministration,
  type KeyInfo,
} from '../key-store.ts';
import { unavailableOnOutage } from './pg-pool.ts';

const WHAT = 'key store';
const COLUMNS = 'digest, plan, label, created_at, last_used_at, revoked_at';

interface KeyRow {
  digest: Buffer;
  plan: Plan;
  label: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export class PostgresKeyStore implements KeyAdministration {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  createKey(plan: Plan, label?: string): Promise<string> {
    return unavailableOnOutage(WHAT, async () => {
      const key = generateApiKey();
      await this.#pool.query('INSERT INTO api_keys (digest, plan, label) VALUES ($1, $2, $3)', [digestKey(key), plan, label ?? null]);
      return key;
    });
  }

  findPlan(key: string): Promise<Plan | null> {
    return unavailableOnOutage(WHAT, async () => {
      const digest = digestKey(key);
      const { rows } = await this.#pool.query<Pick<KeyRow, 'digest' | 'plan' | 'last_used_at' | 'revoked_at'>>(
        'SELECT digest, plan, last_used_at, revoked_at FROM api_keys WHERE digest = $1',
        [digest],
      );
      const row = rows[0];
      if (row === undefined || !digestsEqual(row.digest, digest) || row.revoked_at !== null) return null;
      if (row.last_used_at === null || Date.now() - row.last_used_at.getTime() >= LAST_USED_PRECISION_MS) {
        await this.#pool.query('UPDATE api_keys SET last_used_at = now() WHERE digest = $1', [digest]);
      }
      return row.plan;
    });
  }

  listKeys(): Promise<KeyInfo[]> {
    return unavailableOnOutage(WHAT, async () => {
      const { rows } = await this.#pool.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, digest`);
      return rows.map(infoOf);
    });
  }

  revokeKey(keyOrId: string): Promise<KeyInfo | null> {
    return unavailableOnOutage(WHAT, async () => {
      const prefix = idPrefixOf(keyOrId);
      const { rows } =
        prefix === null
          ? await this.#pool.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE digest = $1`, [digestKey(keyOrId)])
          : await this.#pool.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE encode(digest, 'hex') LIKE $1 || '%'`, [prefix]);
      const [row] = rows;
      if (row === undefined || rows.length > 1) return null;
      const { rows: revoked } = await this.#pool.query<KeyRow>(
        `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE digest = $1 RETURNING ${COLUMNS}`,
        [row.digest],
      );
      return infoOf(revoked[0]!);
    });
  }
}

function infoOf(row: KeyRow): KeyInfo {
  return {
    id: keyIdOf(row.digest),
    label: row.label,
    plan: row.plan,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}
