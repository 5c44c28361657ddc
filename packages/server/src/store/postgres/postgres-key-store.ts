// PostgresKeyStore: API keys as SHA-256 digests with their plan, in the `api_keys` table.
// Guarantees: the key itself is never stored; look-up is by digest, confirmed with a constant-time
// comparison. Failure modes: database unreachable → ServiceUnavailable.
import type pg from 'pg';
import type { Plan } from '../../catalog/model.ts';
import { digestKey, digestsEqual, generateApiKey, type KeyStore } from '../key-store.ts';
import { unavailableOnOutage } from './pg-pool.ts';

const WHAT = 'key store';

export class PostgresKeyStore implements KeyStore {
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
      const { rows } = await this.#pool.query<{ digest: Buffer; plan: Plan }>('SELECT digest, plan FROM api_keys WHERE digest = $1', [digest]);
      const row = rows[0];
      return row !== undefined && digestsEqual(row.digest, digest) ? row.plan : null;
    });
  }
}
