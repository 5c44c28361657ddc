// `pnpm --filter @catalog/client pack:consumer` (a turbo task of `pnpm test`, after `build`): packs the built
// client once into .pack/ for every test that installs it as a consumer would (test/support/packed-client.ts).
import { pack } from '../test/support/packed-client.ts';

pack();
