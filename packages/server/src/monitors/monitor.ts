// A price monitor: a Pro key's standing order to POST the price changes its filter matches to an
// endpoint, signed with a secret of its own (the `priceChanged` webhook of the contract). This
// module holds what a monitor is and the rules for making one; the store keeps them
// (monitor-store.ts), monitor-reader.ts reads the price log for them and monitor-sender.ts delivers.
import { randomBytes } from 'node:crypto';
import type { Monitor as MonitorResource, PriceChange } from '@catalog/contract';
import { InvalidRequest } from '../catalog/errors.ts';
import { parseEventFilter } from '../stream/event-filter.ts';
import type { ComposeDelivery } from './monitor-store.ts';

/** What the operator chooses for a monitor (`catalog monitors add`). */
export interface MonitorSettings {
  url: string;
  /** An expression of the stream's `Filter` language (stream/event-filter.ts). */
  filter: string;
  /** The least change, in percent of the last delivered price, that is delivered; 0: every change. */
  minChangePercent: number;
  /** The least time between two deliveries; changes meanwhile go out together. */
  minIntervalMs: number;
}

export interface Monitor extends MonitorSettings {
  id: string;
  /** The owning key's id (`key_…`, as `catalog keys list` shows it). */
  keyId: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: number;
}

/** Where a monitor's deliveries stand (listMonitors' `delivery`). Times are epoch milliseconds. */
interface MonitorDeliveryState {
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  lastFailureReason: string | null;
  /** Changes not yet delivered: those waiting for a delivery and those in the one under way. */
  backlog: number;
  oldestDueAt: number | null;
}

export interface MonitorView extends Monitor {
  delivery: MonitorDeliveryState;
}

/** Changes in one delivery at most (the contract's `maxItems`). */
export const MAX_CHANGES_PER_DELIVERY = 100;
/** The longest interval between deliveries; the contract counts it in whole seconds. */
const MAX_INTERVAL_MS = 24 * 3600_000;
const MAX_URL_LENGTH = 2048;

/** A monitor refused at creation: the message names the setting and what would be accepted. */
export class InvalidMonitor extends InvalidRequest {}

/**
 * Checks the operator's settings: an absolute https URL (http only when `allowHttp`, for a receiver
 * in development) without credentials, a filter the stream accepts, a percent ≥ 0 and an interval
 * in whole seconds. Throws InvalidMonitor naming the first problem; nothing is stored then.
 */
export function checkMonitorSettings(settings: MonitorSettings, options: { allowHttp?: boolean } = {}): MonitorSettings {
  let url: URL;
  try {
    url = new URL(settings.url);
  } catch {
    throw new InvalidMonitor(`--url "${settings.url}" is not an absolute URL; give https://host/path`);
  }
  if (url.protocol !== 'https:' && !(options.allowHttp === true && url.protocol === 'http:')) {
    throw new InvalidMonitor(`--url must be an https:// URL (got ${url.protocol}//…)${options.allowHttp === true ? '' : '; --allow-http accepts http:// for a receiver in development'}`);
  }
  if (url.username !== '' || url.password !== '') throw new InvalidMonitor('--url must not carry a user name or password; the signature authenticates deliveries');
  if (settings.url.length > MAX_URL_LENGTH) throw new InvalidMonitor(`--url is longer than ${MAX_URL_LENGTH} characters`);
  try {
    parseEventFilter(settings.filter);
  } catch (error) {
    throw new InvalidMonitor(`--filter: ${(error as Error).message}`);
  }
  if (!Number.isFinite(settings.minChangePercent) || settings.minChangePercent < 0 || settings.minChangePercent > 1000) {
    throw new InvalidMonitor(`--min-change-percent must be a number from 0 (every change) to 1000, got ${settings.minChangePercent}`);
  }
  if (!Number.isInteger(settings.minIntervalMs) || settings.minIntervalMs < 0 || settings.minIntervalMs > MAX_INTERVAL_MS || settings.minIntervalMs % 1000 !== 0) {
    throw new InvalidMonitor(`--min-interval must be whole seconds from 0 to ${MAX_INTERVAL_MS / 1000}, got ${settings.minIntervalMs / 1000}`);
  }
  return { ...settings, url: url.toString() };
}

export function generateMonitorId(): string {
  return `mon_${randomBytes(6).toString('hex')}`;
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function generateMonitorSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A delivery's `webhook-id`, the same on each of its attempts. */
function generateMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** The `priceChanged` body of a batch of changes (the Standard Webhooks envelope). */
export function priceChangedBody(monitorId: string, changes: readonly PriceChange[], reset: boolean, at: number): string {
  return JSON.stringify({ type: 'price.changed', timestamp: new Date(at).toISOString(), data: { monitor_id: monitorId, reset, changes } });
}

/** A new delivery's id and body, from a monitor's oldest changes (the store calls it as it forms one). */
export const composeDelivery: ComposeDelivery = (monitorId, changes, reset, at) => ({ messageId: generateMessageId(), body: priceChangedBody(monitorId, changes, reset, at) });

const isoOrNull = (at: number | null): string | null => (at === null ? null : new Date(at).toISOString());

/** A monitor as listMonitors shows it to its key: never its secret. */
export function monitorResource(view: MonitorView): MonitorResource {
  return {
    id: view.id,
    url: view.url,
    filter: view.filter,
    min_change_percent: view.minChangePercent,
    min_interval_seconds: view.minIntervalMs / 1000,
    enabled: view.enabled,
    disabled_reason: view.disabledReason,
    created_at: new Date(view.createdAt).toISOString(),
    delivery: {
      last_success_at: isoOrNull(view.delivery.lastSuccessAt),
      last_failure_at: isoOrNull(view.delivery.lastFailureAt),
      last_failure_reason: view.delivery.lastFailureReason,
      backlog: view.delivery.backlog,
      oldest_due_at: isoOrNull(view.delivery.oldestDueAt),
    },
  };
}
