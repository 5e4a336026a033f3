// The README's example is examples/hello.mjs verbatim, and it works against a real `qim up`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { QimClient } from '../dist/index.js';
import { Qim, user, waitFor } from './qim.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

test('the README shows examples/hello.mjs, and it sends a message a fresh reader receives', async () => {
  const example = readFileSync(join(root, 'examples', 'hello.mjs'), 'utf8');
  assert.ok(readFileSync(join(root, 'README.md'), 'utf8').includes(example), 'README.md must hold examples/hello.mjs');
  assert.ok(example.trim().split('\n').length <= 16);

  const qim = await new Qim().start();
  try {
    const a = user('alice'), b = user('bob');
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'examples', 'hello.mjs')], {
      env: { ...process.env, QIM_URL: qim.url, QIM_TOKEN: qim.token(a), QIM_TO: b },
    });
    assert.match(stdout, /^stored as \d+ in d:/m);
    const bob = new QimClient({ url: qim.url, token: qim.token(b), createSocket: qim.socketFactory() });
    const got = [];
    bob.on('message', (m) => got.push(m));
    await bob.start();
    await waitFor('bob', () => got.length >= 1);
    assert.equal(got[0].body, 'hello from the SDK');
    assert.equal(got[0].sender, a);
    bob.close();
  } finally {
    await qim.destroy();
  }
});
