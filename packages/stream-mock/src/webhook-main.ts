// `pnpm mock:webhook --url <receiver> [--secret whsec_…]`: sends the contract's signed
// `priceChanged` examples to a receiver (webhook-mock.ts). Without --secret it makes one and prints it.
import { parseArgs } from 'node:util';
import { generateSecret, sendExampleWebhooks } from './webhook-mock.ts';

const { values } = parseArgs({ options: { url: { type: 'string' }, secret: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help === true || values.url === undefined) {
  (values.help === true ? process.stdout : process.stderr).write('usage: pnpm mock:webhook --url <receiver URL> [--secret whsec_…]\n');
  process.exit(values.help === true ? 0 : 2);
}
const secret = values.secret ?? generateSecret();
if (values.secret === undefined) console.log(`secret (verify with it): ${secret}`);
try {
  for (const delivery of await sendExampleWebhooks(values.url, secret)) {
    console.log(`${delivery.webhookId}: ${delivery.status}${delivery.status >= 200 && delivery.status < 300 ? ' (delivered)' : ' (a monitor would retry this, or disable itself on 410)'}`);
  }
} catch (error) {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  process.stderr.write(`could not deliver to ${values.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}\n`);
  process.exitCode = 1;
}
