// The README's examples are examples/hello.mjs and examples/inbox.mjs verbatim, and they work against a
// real `qim up`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { QimClient, directConversation } from '../dist/index.js';
import { Qim, runExampleAndReceive, user } from './qim.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = () => readFileSync(join(root, 'README.md'), 'utf8');

let qim;
before(async () => {
  qim = await new Qim().start();
});
after(async () => {
  await qim?.destroy();
});

test('the README shows examples/hello.mjs, and it sends a message a fresh reader receives', async () => {
  const example = readFileSync(join(root, 'examples', 'hello.mjs'), 'utf8');
  assert.ok(readme().includes(example), 'README.md must hold examples/hello.mjs');
  assert.ok(example.trim().split('\n').length <= 16);
  const { sender, alice } = await runExampleAndReceive(qim, join(root, 'examples', 'hello.mjs'));
  assert.equal(sender, alice);
});

test('the README shows examples/inbox.mjs: it lists the conversations with their unread counts and reads them on every device', async () => {
  const example = readFileSync(join(root, 'examples', 'inbox.mjs'), 'utf8');
  assert.ok(readme().includes(example), 'README.md must hold examples/inbox.mjs');
  const a = user('alice'), b = user('bob');
  const client = (name) => new QimClient({ url: qim.url, token: qim.token(name), createSocket: qim.socketFactory() });
  const alice = client(a);
  await alice.start();
  await alice.send({ to: b, body: 'first' });
  await alice.send({ to: b, body: 'second' });
  alice.close();

  // Another device of bob's, online while the example runs, hears of the read.
  const phone = client(b);
  const reads = [];
  phone.on('read', (r) => reads.push(r));
  await phone.start();

  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'examples', 'inbox.mjs')], {
    env: { ...process.env, QIM_URL: qim.url, QIM_TOKEN: qim.token(b, 'example') },
  });
  const conversation = directConversation(a, b);
  assert.match(stdout, new RegExp(`^${a}: 2 unread, last "second"$`, 'm'));
  assert.match(stdout, new RegExp(`^marked ${conversation} read: 0 unread$`, 'm'));
  for (let i = 0; i < 200 && reads.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(reads.map((r) => [r.conversation, r.unread, r.origin]), [[conversation, 0, 'elsewhere']]);
  // And the server says so to anyone who asks.
  const page = await phone.conversations();
  assert.deepEqual(page.conversations.map((c) => [c.conversation, c.unread]), [[conversation, 0]]);
  phone.close();
});

test('the README shows examples/changes.mjs: edit, recall, mute, delete for me and block, and the peer sees the message change', async () => {
  const example = readFileSync(join(root, 'examples', 'changes.mjs'), 'utf8');
  assert.ok(readme().includes(example), 'README.md must hold examples/changes.mjs');
  const a = user('alice'), b = user('bob');
  const bob = new QimClient({ url: qim.url, token: qim.token(b), createSocket: qim.socketFactory() });
  const states = [];
  bob.on('messageState', (m) => states.push(m));
  await bob.start();
  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'examples', 'changes.mjs')], {
    env: { ...process.env, QIM_URL: qim.url, QIM_TOKEN: qim.token(a), QIM_TO: b },
  });
  assert.match(stdout, /^edited \d+$/m);
  assert.match(stdout, /^recalled: body ""$/m);
  assert.match(stdout, /^no edit: MESSAGE_RECALLED$/m);
  assert.match(stdout, /^deleted for me through \d+$/m);
  assert.match(stdout, new RegExp(`^blocked: ${b}$`, 'm'));
  for (let i = 0; i < 400 && !states.some((s) => s.recalled); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(states.some((s) => s.body === 'hello' && s.edit_count === 1), JSON.stringify(states));
  assert.ok(states.some((s) => s.recalled && s.body === ''), JSON.stringify(states));
  await assert.rejects(bob.send({ to: a, body: 'hi' }), (e) => e.code === 'BLOCKED');
  bob.close();
});
