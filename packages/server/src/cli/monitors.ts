// `catalog monitors add|list|remove|enable`: price monitors for the operator (the API only lists a
// key's own, listMonitors).
// - add: checks every setting before anything is stored (a bad URL, filter, percent or interval is
//   refused with exit status 2 and says why); prints the monitor's `whsec_` secret as the last line
//   of stdout, once: receivers verify signatures with it. The monitor delivers the changes
//   published after it was added (it starts at the price log's newest event);
// - list: id, key, URL, filter, thresholds, state and delivery state, as a table (or JSON lines);
// - remove <id>: the monitor and its undelivered changes are gone; a delivery under way may still arrive;
// - enable <id>: a monitor disabled by a 410, by failures or by the operator delivers again, from
//   its oldest undelivered change; a revoked key's monitors cannot be enabled.
import { silentLogger } from '../logger.ts';
import { checkMonitorSettings, InvalidMonitor, type MonitorView } from '../monitors/monitor.ts';
import { databaseUrlOf, MONITORS_ADD_SETTINGS, numericValue, priceLogUrlOf, SettingError, type SettingValues } from '../settings.ts';
import { MonitorKeyRefused } from '../monitors/monitor-store.ts';
import { openCatalogStores } from '../store/open-store.ts';
import { openPriceLog } from '../prices/open-price-log.ts';
import { commandSpec, parseCommand } from './command-line.ts';

const SUBCOMMANDS = ['add', 'list', 'remove', 'enable'] as const;

export async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || !(SUBCOMMANDS as readonly string[]).includes(sub)) {
    const usage = `usage: catalog monitors <${SUBCOMMANDS.join('|')}> [options]\n\n${SUBCOMMANDS.map((name) => `  ${name.padEnd(8)} ${commandSpec(`monitors ${name}`).summary}`).join('\n')}\n`;
    const help = sub === '--help' || sub === '-h';
    (help ? process.stdout : process.stderr).write(sub === undefined || help ? usage : `unknown monitors command "${sub}"\n\n${usage}`);
    return help ? 0 : 2;
  }
  const parsed = parseCommand(commandSpec(`monitors ${sub}`), rest);
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  let settings: ReturnType<typeof settingsOf> | undefined;
  if (sub === 'add') {
    try {
      settings = settingsOf(values);
    } catch (error) {
      if (!(error instanceof InvalidMonitor)) throw error;
      process.stderr.write(`${error.message}; nothing was stored\n`);
      return 2;
    }
  }
  const stores = await openCatalogStores(databaseUrlOf(values), silentLogger);
  try {
    switch (sub) {
      case 'add': {
        const { key, ...monitorSettings } = settings!;
        try {
          const { monitor, secret } = await stores.monitors.addMonitor(key, monitorSettings, await newestPriceId(priceLogUrlOf(values)));
          process.stderr.write(`created monitor ${monitor.id} of ${monitor.keyId}, POSTing to ${monitor.url}; its signing secret is shown only once:\n`);
          process.stdout.write(`${monitor.id}\n${secret}\n`);
          return 0;
        } catch (error) {
          if (!(error instanceof MonitorKeyRefused)) throw error;
          process.stderr.write(`${error.message}; nothing was stored\n`);
          return 1;
        }
      }
      case 'list': {
        const monitors = await stores.monitors.listMonitors(values['key'] as string | undefined);
        process.stdout.write(values['json'] === true ? monitors.map((monitor) => `${JSON.stringify(monitor)}\n`).join('') : table(monitors));
        return 0;
      }
      case 'remove': {
        const removed = await stores.monitors.removeMonitor(positionals[0]!);
        if (!removed) return noSuchMonitor(positionals[0]!);
        process.stdout.write(`removed ${positionals[0]!} and what it had not delivered\n`);
        return 0;
      }
      default: {
        const enabled = await stores.monitors.enableMonitor(positionals[0]!);
        if (enabled === null) return noSuchMonitor(positionals[0]!, ' (or its key is revoked)');
        process.stdout.write(`enabled ${enabled.id}; running instances deliver what it had not delivered within seconds\n`);
        return 0;
      }
    }
  } finally {
    await stores.close();
  }
}

/**
 * The price log's newest id: a new monitor delivers what is published after it. Without a price
 * log at hand (PostgreSQL and no --price-log), or when it does not answer, the monitor starts
 * where the service first reads for it instead, which the operator is told.
 */
async function newestPriceId(url: string | undefined): Promise<number | null> {
  if (url === undefined) {
    process.stderr.write('no --price-log given: the monitor starts at the newest price event when the service first reads for it\n');
    return null;
  }
  try {
    const log = await openPriceLog(url, silentLogger);
    try {
      return (await log.bounds())?.newestId ?? 0;
    } finally {
      await log.close();
    }
  } catch (error) {
    process.stderr.write(`the price log did not answer (${(error as Error).message}): the monitor starts at the newest price event when the service first reads for it\n`);
    return null;
  }
}

function noSuchMonitor(id: string, or = ''): number {
  process.stderr.write(`no monitor ${id}${or}: see \`catalog monitors list\`\n`);
  return 1;
}

/** The options of `monitors add`, checked (InvalidMonitor names the first problem). */
function settingsOf(values: SettingValues): { key: string; url: string; filter: string; minChangePercent: number; minIntervalMs: number } {
  const required = (flag: string): string => {
    const value = values[flag];
    if (typeof value !== 'string' || value === '') throw new InvalidMonitor(`--${flag} is required`);
    return value;
  };
  const key = required('key');
  const url = required('url');
  const filter = required('filter');
  const number = (flag: keyof typeof MONITORS_ADD_SETTINGS): number => {
    try {
      return numericValue(flag, MONITORS_ADD_SETTINGS[flag], values[flag] as string | undefined)!;
    } catch (error) {
      throw error instanceof SettingError ? new InvalidMonitor(error.message) : error;
    }
  };
  const minChangePercent = number('min-change-percent');
  const minIntervalMs = number('min-interval') * 1000;
  return { key, ...checkMonitorSettings({ url, filter, minChangePercent, minIntervalMs }, { allowHttp: values['allow-http'] === true }) };
}

const at = (ms: number | null): string => (ms === null ? '' : new Date(ms).toISOString());

function table(monitors: readonly MonitorView[]): string {
  const rows = [
    ['id', 'key', 'url', 'filter', 'min %', 'interval s', 'state', 'backlog', 'last success', 'last failure'],
    ...monitors.map((monitor) => [
      monitor.id,
      monitor.keyId,
      monitor.url,
      monitor.filter,
      String(monitor.minChangePercent),
      String(monitor.minIntervalMs / 1000),
      monitor.enabled ? 'enabled' : `disabled: ${monitor.disabledReason ?? ''}`,
      String(monitor.delivery.backlog),
      at(monitor.delivery.lastSuccessAt),
      monitor.delivery.lastFailureAt === null ? '' : `${at(monitor.delivery.lastFailureAt)} ${monitor.delivery.lastFailureReason ?? ''}`,
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}\n`).join('');
}
