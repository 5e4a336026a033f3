// The SDK outside this repository (issue 37, item 4): `npm pack`'s tarball installs into an empty project
// (with `ws`, its dependency) and the README example runs there against a real `qim up`. npm works from
// its cache first (--prefer-offline; the test command's cache under build/npm-cache when there is one).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Qim, runExampleAndReceive } from './qim.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const cache = resolve(root, '../../build/npm-cache');
const cacheArgs = existsSync(cache) ? ['--cache', cache] : [];

test('the packed tarball installs into an empty project and the README example runs there', { timeout: 180_000 }, async () => {
  const work = mkdtempSync('/tmp/web-sdk-pack-');
  const qim = await new Qim().start();
  try {
    // dist/ is built (npm run build) before the tests run; --ignore-scripts: pack it as it is.
    await run(npm, ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: root });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote no tarball');

    const app = join(work, 'app');
    await run('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    await run(npm, ['install', join(work, tarball), '--prefer-offline', '--no-audit', '--no-fund', ...cacheArgs], {
      cwd: app,
    });
    assert.ok(existsSync(join(app, 'node_modules', '@qim', 'client', 'dist', 'index.js')));
    assert.ok(existsSync(join(app, 'node_modules', 'ws', 'package.json')), 'ws must come with @qim/client');

    copyFileSync(join(root, 'examples', 'hello.mjs'), join(app, 'hello.mjs'));
    await runExampleAndReceive(qim, 'hello.mjs', app);
  } finally {
    await qim.destroy();
    rmSync(work, { recursive: true, force: true });
  }
});
