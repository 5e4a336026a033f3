// The README's example is examples/hello.mjs verbatim, and it works against a real `qim up`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Qim, runExampleAndReceive } from './qim.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

test('the README shows examples/hello.mjs, and it sends a message a fresh reader receives', async () => {
  const example = readFileSync(join(root, 'examples', 'hello.mjs'), 'utf8');
  assert.ok(readFileSync(join(root, 'README.md'), 'utf8').includes(example), 'README.md must hold examples/hello.mjs');
  assert.ok(example.trim().split('\n').length <= 16);

  const qim = await new Qim().start();
  try {
    const { sender, alice } = await runExampleAndReceive(qim, join(root, 'examples', 'hello.mjs'));
    assert.equal(sender, alice);
  } finally {
    await qim.destroy();
  }
});
