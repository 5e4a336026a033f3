// Attachments through the SDK against a real `qim up` with a real object store (SeaweedFS, started by
// scripts/test.sh's objstore phase group, which exports QIM_TEST_S3_*): sendFile uploads straight to the
// store, the peer receives the message, asks ATTACHMENT_URL and downloads the same bytes; a non-member is
// refused UNKNOWN_ATTACHMENT; a server without a store refuses ATTACHMENTS_DISABLED.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { directConversation, parseAttachmentsBody, QimClient, QimError } from '../dist/index.js';
import { Qim, user, waitFor } from './qim.mjs';

const S3 = {
  endpoint: process.env.QIM_TEST_S3_ENDPOINT,
  bucket: process.env.QIM_TEST_S3_BUCKET,
  access: process.env.QIM_TEST_S3_ACCESS_KEY,
  secret: process.env.QIM_TEST_S3_SECRET_KEY,
};
const skipStore = S3.endpoint
  ? false
  : 'no object store: QIM_TEST_S3_ENDPOINT is unset (scripts/test.sh sets it in its objstore phase group; ' +
    'or run scripts/engines/objstore.sh start && wait, and export QIM_TEST_S3_* from its `env`)';

let qim;
let bare;
before(async () => {
  if (!skipStore) {
    qim = await new Qim({
      env: {
        QIM_S3_ENDPOINT: S3.endpoint,
        QIM_S3_BUCKET: S3.bucket,
        QIM_S3_ACCESS_KEY: S3.access,
        QIM_S3_SECRET_KEY: S3.secret,
        QIM_S3_PATH_STYLE: '1',
      },
    }).start();
  }
  // No store at all (QIM_S3_ENDPOINT empty is "off", whatever the environment says).
  bare = await new Qim({ env: { QIM_S3_ENDPOINT: '' } }).start();
});
after(async () => {
  await qim?.destroy();
  await bare?.destroy();
});

function client(server, name) {
  return new QimClient({ url: server.url, token: server.token(name), createSocket: server.socketFactory() });
}

const sha = (b) => createHash('sha256').update(b).digest('hex');

test('sendFile: the peer receives the message and downloads the same bytes; a non-member is refused', { skip: skipStore }, async () => {
  const a = user('alice'), b = user('bob'), c = user('carol');
  const alice = client(qim, a), bob = client(qim, b), carol = client(qim, c);
  const got = [];
  bob.on('message', (m) => got.push(m));
  await Promise.all([alice.start(), bob.start(), carol.start()]);
  try {
    const conv = directConversation(a, b);
    const bytes = new Uint8Array(randomBytes(300 * 1024));
    const phases = [];
    const { ack, attachment } = await alice.sendFile(
      conv,
      { name: 'notes.txt', type: 'text/plain', size: bytes.byteLength, bytes },
      'the notes',
      { onProgress: (p) => phases.push(p.phase) },
    );
    assert.equal(phases[0], 'start');
    assert.equal(phases.at(-1), 'done');
    assert.equal(attachment.sha256, sha(bytes), 'the hash is declared (the server checks it)');

    await waitFor('bob receives the message', () => got.some((m) => m.message_id === ack.message_id));
    const m = got.find((x) => x.message_id === ack.message_id);
    const parsed = parseAttachmentsBody(m.body);
    assert.ok(parsed, `a server-written attachments body: ${m.body}`);
    assert.equal(parsed.text, 'the notes');
    assert.equal(parsed.attachments.length, 1);
    const info = parsed.attachments[0];
    assert.deepEqual(
      { attachment: info.attachment, kind: info.kind, name: info.name, content_type: info.content_type, size: info.size },
      { attachment: attachment.attachment, kind: 'file', name: 'notes.txt', content_type: 'text/plain', size: bytes.byteLength },
    );

    const url = await bob.attachmentUrl(conv, ack.message_id, info);
    assert.equal(url.type, 'ATTACHMENT_URL_OK');
    const r = await fetch(url.url);
    assert.equal(r.status, 200);
    assert.equal(sha(new Uint8Array(await r.arrayBuffer())), sha(bytes), 'the same bytes');

    await assert.rejects(carol.attachmentUrl(conv, ack.message_id, info), (e) => {
      assert.ok(e instanceof QimError, String(e));
      assert.equal(e.code, 'UNKNOWN_ATTACHMENT');
      return true;
    });
    // No thumbnail for a file: the same one code.
    await assert.rejects(bob.attachmentUrl(conv, ack.message_id, info, { thumbnail: true }), { code: 'UNKNOWN_ATTACHMENT' });
  } finally {
    alice.close();
    bob.close();
    carol.close();
  }
});

test('a failed upload is tried again: a network error on the same URL, a 403 after a fresh ATTACH of the same upload', { skip: skipStore }, async () => {
  const a = user('alice'), b = user('bob');
  const alice = client(qim, a), bob = client(qim, b);
  const got = [];
  bob.on('message', (m) => got.push(m));
  await Promise.all([alice.start(), bob.start()]);
  const realFetch = globalThis.fetch;
  const puts = [];
  // The store's side is faked for the first two tries only: a dropped connection, then a refused signature.
  globalThis.fetch = async (url, init) => {
    if (init?.method === 'PUT') {
      puts.push(String(url));
      if (puts.length === 1) throw new TypeError('fetch failed (socket hang up)');
      if (puts.length === 2) return new Response('<Error><Code>AccessDenied</Code></Error>', { status: 403 });
    }
    return realFetch(url, init);
  };
  try {
    const conv = directConversation(a, b);
    const bytes = new Uint8Array(randomBytes(1000));
    const events = [];
    const { ack, attachment } = await alice.sendFile(conv, { name: 'r.txt', type: 'text/plain', size: 1000, bytes }, '', {
      onProgress: (p) => events.push([p.phase, p.attempt, p.attachment]),
    });
    assert.deepEqual(events.map(([ph, n]) => `${ph}${n}`), ['start1', 'retry1', 'start2', 'retry2', 'start3', 'done3']);
    assert.equal(puts.length, 3);
    assert.equal(puts[1], puts[0], 'a network error: the same URL again');
    assert.equal(events[4][2], events[2][2], 'a 403: a fresh ATTACH with the same client_upload_id answers the same attachment (charged once)');
    assert.equal(attachment.attachment, events[4][2]);
    await waitFor('bob receives the message', () => got.some((m) => m.message_id === ack.message_id));
    const info = parseAttachmentsBody(got.find((m) => m.message_id === ack.message_id).body).attachments[0];
    const r = await realFetch((await bob.attachmentUrl(conv, ack.message_id, info)).url);
    assert.equal(sha(new Uint8Array(await r.arrayBuffer())), sha(bytes));
  } finally {
    globalThis.fetch = realFetch;
    alice.close();
    bob.close();
  }
});

test('a type the server does not allow is refused UNSUPPORTED_TYPE before any upload', { skip: skipStore }, async () => {
  const a = user('alice'), b = user('bob');
  const alice = client(qim, a);
  await alice.start();
  try {
    const bytes = new Uint8Array([1, 2, 3]);
    const phases = [];
    await assert.rejects(
      alice.attach(directConversation(a, b), { name: 'x.exe', type: 'application/x-msdownload', size: 3, bytes }, {
        onProgress: (p) => phases.push(p.phase),
      }),
      (e) => e instanceof QimError && e.code === 'UNSUPPORTED_TYPE',
    );
    assert.deepEqual(phases, []);
  } finally {
    alice.close();
  }
});

test('a server without an object store refuses ATTACHMENTS_DISABLED (typed)', async () => {
  const a = user('alice'), b = user('bob');
  const alice = client(bare, a);
  await alice.start();
  try {
    const bytes = new Uint8Array([104, 105]);
    await assert.rejects(
      alice.sendFile(directConversation(a, b), { name: 'hi.txt', type: 'text/plain', size: 2, bytes }),
      (e) => {
        assert.ok(e instanceof QimError, String(e));
        assert.equal(e.code, 'ATTACHMENTS_DISABLED');
        assert.equal(e.retryable, false);
        return true;
      },
    );
  } finally {
    alice.close();
  }
});

test('the README shows examples/attach.mjs, and it sends a file whose URL serves the same bytes', { skip: skipStore }, async () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const example = readFileSync(join(root, 'examples', 'attach.mjs'), 'utf8');
  assert.ok(readFileSync(join(root, 'README.md'), 'utf8').includes(example), 'README.md must hold examples/attach.mjs');
  const dir = mkdtempSync('/tmp/web-sdk-attach-');
  try {
    const file = join(dir, 'hello.txt');
    writeFileSync(file, 'hello in a file\n');
    const a = user('alice'), b = user('bob');
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'examples', 'attach.mjs')], {
      env: { ...process.env, QIM_URL: qim.url, QIM_TOKEN: qim.token(a), QIM_TO: b, QIM_FILE: file },
    });
    assert.match(stdout, /^upload start 0\/16$/m);
    assert.match(stdout, /^upload done 16\/16$/m);
    assert.match(stdout, /^stored as \d+ in d:/m);
    const link = stdout.match(/^file hello\.txt \(16 bytes\): (\S+)$/m);
    assert.ok(link, stdout);
    assert.equal(await (await fetch(link[1])).text(), 'hello in a file\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('parseAttachmentsBody reads the server-written body and nothing else', () => {
  assert.equal(parseAttachmentsBody('hello'), null);
  assert.equal(parseAttachmentsBody('{"qim":"attachments",'), null);
  const p = parseAttachmentsBody(
    '{"qim":"attachments","text":"look","attachments":[{"attachment":"a1.x.y","kind":"image","name":"cat.png",' +
      '"content_type":"image/png","size":48213,"sha256":"ab","width":64,"height":48,"thumbnail":true},{"bad":1}]}',
  );
  assert.deepEqual(p, {
    text: 'look',
    attachments: [
      { attachment: 'a1.x.y', kind: 'image', name: 'cat.png', content_type: 'image/png', size: 48213, sha256: 'ab', width: 64, height: 48, thumbnail: true },
    ],
  });
});
