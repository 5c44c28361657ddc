// API keys are stored only as SHA-256 digests with their plan. Look-up is by digest, then a
// fixed-length constant-time comparison of the digests; the key itself is shown once, at creation.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Plan } from '../catalog/model.ts';

export interface KeyStore {
  /** Stores the digest of a new key and returns the key; it cannot be recovered later. */
  createKey(plan: Plan, label?: string): Promise<string>;
  /** The plan of a key, or null when the key is unknown. */
  findPlan(key: string): Promise<Plan | null>;
}

export function generateApiKey(): string {
  return `ck_${randomBytes(24).toString('base64url')}`;
}

export function digestKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Compares two digests in constant time; both are 32 bytes by construction. */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
