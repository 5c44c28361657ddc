// A private npm registry for one test file: Verdaccio in this process, on a free port, with its
// storage, users and config in a directory of the caller's. It is offline: it serves only what is
// published to it (the contract's packages by the release, their third-party dependencies by
// `publishTarball` from the workspace's installed copies), so installs from it need no network and
// no public package can stand in for ours. One user may publish; `npmrc` holds its token, for
// `NPM_CONFIG_USERCONFIG`. `close()` stops the registry; the caller removes the directory.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runServer } from 'verdaccio';

const execFileAsync = promisify(execFile);

export interface Registry {
  /** With a trailing slash, as npm and pnpm write registry URLs. */
  url: string;
  /** An .npmrc with the registry and the publishing user's token. */
  npmrc: string;
  /** Publishes a package tarball as it is (`npm publish <file>`, no scripts). */
  publishTarball(file: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRegistry(dir: string): Promise<Registry> {
  const config = {
    self_path: dir,
    storage: join(dir, 'storage'),
    // sha1, not bcrypt: every authenticated request verifies the password, and this user lives for one test.
    auth: { htpasswd: { file: join(dir, 'htpasswd'), max_users: 1, algorithm: 'sha1' } },
    uplinks: {},
    packages: { '**': { access: '$all', publish: '$authenticated' } },
    web: { enable: false },
    log: { type: 'stdout', format: 'json', level: 'error' },
  };
  const server = (await runServer(config as unknown as Parameters<typeof runServer>[0])) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  try {
    const response = await fetch(`${url}-/user/org.couchdb.user:release`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release', password: 'release-test-password' }),
    });
    const { token } = (await response.json()) as { token?: string };
    if (response.status !== 201 || token === undefined) throw new Error(`the registry refused the user: ${response.status}`);
    const npmrc = join(dir, 'npmrc');
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    const publishTarball = async (file: string): Promise<void> => {
      await execFileAsync('npm', ['publish', file, '--registry', url, '--ignore-scripts', '--tag', 'latest'], {
        env: { ...process.env, NPM_CONFIG_USERCONFIG: npmrc, npm_config_update_notifier: 'false' },
      });
    };
    return { url, npmrc, publishTarball, close };
  } catch (error) {
    await close();
    throw error;
  }
}
