// API keys are stored only as SHA-256 digests with their plan. Look-up is by digest, then a
// fixed-length constant-time comparison of the digests; the key itself is shown once, at creation.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Plan } from '../catalog/model.ts';

export interface KeyStore {
  /** Stores the digest of a new key and returns the key; it cannot be recovered later. */
  createKey(plan: Plan, label?: string): Promise<string>;
  /**
   * The plan of a key, or null when the key is unknown or revoked. Records when the key was last
   * used, at most once per LAST_USED_PRECISION_MS.
   */
  findPlan(key: string): Promise<Plan | null>;
}

/** What operators see of a key: never the key itself. */
export interface KeyInfo {
  /** `key_` and the first 12 hex digits of the key's digest: names the key without revealing it. */
  id: string;
  label: string | null;
  plan: Plan;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The key store as the `catalog keys` commands use it. */
export interface KeyAdministration extends KeyStore {
  /** Every key, oldest first. */
  listKeys(): Promise<KeyInfo[]>;
  /** Revokes the key given as the key itself or as its id; null when there is no such key. */
  revokeKey(keyOrId: string): Promise<KeyInfo | null>;
}

/** `last used` is written at most this often per key, so the serving path rarely writes. */
export const LAST_USED_PRECISION_MS = 60_000;

export function keyIdOf(digest: Uint8Array): string {
  return `key_${Buffer.from(digest).toString('hex').slice(0, 12)}`;
}

/** The digest prefix (hex) a key id names, or null when `keyOrId` is not an id. */
export function idPrefixOf(keyOrId: string): string | null {
  const match = /^key_([0-9a-f]{12})$/.exec(keyOrId);
  return match === null ? null : match[1]!;
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
