// The SDK against a real `qim up`: the client loop (SYNC pages from a stored cursor, live pushes), sends
// with client_msg_id across a restart of the server, typed errors, history paging, wss:// with the dev
// certificate.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemoryCursorStore, QimClient, QimConnectionError, QimError, directConversation } from '../dist/index.js';
import WebSocket from 'ws';
import { Qim, freePort, user, waitFor } from './qim.mjs';

function client(qim, name, extra = {}) {
  return new QimClient({
    url: qim.url,
    token: () => qim.token(name),
    createSocket: qim.socketFactory(),
    reconnectInitialMs: 50,
    reconnectMaxMs: 500,
    ...extra,
  });
}

// Collects the `message` events of a client.
function inbox(c) {
  const got = [];
  c.on('message', (e) => got.push(e));
  return got;
}

describe('against qim up (ws://)', () => {
  let qim;
  before(async () => {
    qim = await new Qim().start();
  });
  after(async () => {
    await qim?.destroy();
  });

  test('a push reaches the other user live, and each message shows once', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a), bob = client(qim, b);
    const bobs = inbox(bob);
    await bob.start();
    const ok = await alice.start();
    assert.equal(ok.user, a);
    const ack = await alice.send({ to: b, body: 'hello bob', clientMsgId: 'c1' });
    assert.equal(ack.type, 'SEND_ACK');
    assert.equal(ack.conversation, directConversation(a, b));
    await waitFor('bob gets the message', () => bobs.length >= 1);
    assert.equal(bobs[0].body, 'hello bob');
    assert.equal(bobs[0].sender, a);
    assert.equal(bobs[0].message_id, ack.message_id);
    // The same client_msg_id again is the same message, not a second one.
    const again = await alice.send({ to: b, body: 'hello bob', clientMsgId: 'c1' });
    assert.equal(again.duplicate, true);
    assert.equal(again.message_id, ack.message_id);
    await alice.send({ conversation: directConversation(a, b), body: 'second' });
    await waitFor('bob gets the second', () => bobs.length >= 2);
    assert.deepEqual(bobs.map((e) => e.body), ['hello bob', 'second']);
    alice.close();
    bob.close();
  });

  test('a client resumes from its stored cursor: SYNC pages until more is false, nothing twice', async () => {
    const a = user('alice'), b = user('bob');
    const store = new MemoryCursorStore();
    const alice = client(qim, a);
    await alice.start();
    for (let i = 0; i < 3; i++) await alice.send({ to: b, body: `early ${i}` });
    const first = client(qim, b, { cursorStore: store, syncLimit: 2 });
    const seen = inbox(first);
    await first.start();
    await waitFor('the first session syncs the early ones', () => seen.length >= 3);
    first.close();
    const cursorAfterFirst = store.load();
    assert.ok(BigInt(cursorAfterFirst) > 0n);

    for (let i = 0; i < 5; i++) await alice.send({ to: b, body: `late ${i}` });
    // A fresh client with the stored cursor, small pages: only the five new ones, in order.
    const second = client(qim, b, { cursorStore: store, syncLimit: 2 });
    const later = inbox(second);
    await second.start();
    await waitFor('the second session syncs the late ones', () => later.length >= 5);
    assert.deepEqual(later.map((e) => e.body), ['late 0', 'late 1', 'late 2', 'late 3', 'late 4']);
    assert.ok(later.every((e) => BigInt(e.seq) > BigInt(cursorAfterFirst)));
    // Still live after the sync.
    await alice.send({ to: b, body: 'live' });
    await waitFor('the live one', () => later.length >= 6);
    assert.equal(later.length, 6);
    assert.equal(later[5].body, 'live');
    alice.close();
    second.close();
  });

  test('refusals are typed errors with the protocol code and are not retried', async () => {
    const a = user('alice');
    const alice = client(qim, a);
    await alice.start();
    await assert.rejects(alice.send({ to: 'bad:name', body: 'x' }), (e) => {
      assert.ok(e instanceof QimError);
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.equal(e.retryable, false);
      return true;
    });
    await assert.rejects(alice.history('d:else:someone'), (e) => e instanceof QimError && e.code === 'FORBIDDEN');
    alice.close();
    // A bad token: start() rejects with UNAUTHENTICATED and the client stops.
    const bad = new QimClient({ url: qim.url, token: 'not-a-token', createSocket: qim.socketFactory() });
    await assert.rejects(bad.start(), (e) => e instanceof QimError && e.code === 'UNAUTHENTICATED');
    assert.equal(bad.state, 'closed');
  });

  test('history pages back, newest first, without overlap', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a);
    await alice.start();
    for (let i = 0; i < 7; i++) await alice.send({ to: b, body: `h${i}` });
    const bob = client(qim, b);
    await bob.start();
    const conv = directConversation(a, b);
    // History is written by the archiver, shortly after the sends: wait for all seven.
    await waitFor('the archiver', async () => (await bob.history(conv, { limit: 50 })).messages.length >= 7);
    const bodies = [];
    let before;
    let pages = 0;
    for (;;) {
      const page = await bob.history(conv, { before, limit: 3 });
      pages++;
      bodies.push(...page.messages.map((m) => m.body));
      if (!page.more) break;
      before = page.messages[page.messages.length - 1].message_id;
    }
    assert.deepEqual(bodies, ['h6', 'h5', 'h4', 'h3', 'h2', 'h1', 'h0']);
    assert.equal(pages, 3);
    alice.close();
    bob.close();
  });

  test('200 messages of 16 KiB DEL bytes sync from 0 in pages within the frame bound', async () => {
    // Each DEL byte is written \u007f: one SYNC of 200 such entries was a ~19 MB frame, over every
    // client's limit, so the receiver's loop failed on every SYNC.
    const a = user('alice'), b = user('bob');
    const body = '\x7f'.repeat(16 * 1024);
    const alice = client(qim, a);
    await alice.start();
    for (let i = 0; i < 200; i++) await alice.send({ to: b, body, clientMsgId: `del-${i}` });
    alice.close();
    const bob = client(qim, b, { syncLimit: 500 });
    const seen = inbox(bob);
    const errors = [];
    bob.on('error', (e) => errors.push(e));
    await bob.start();
    await waitFor('all 200 shown', () => seen.length >= 200 || errors.length > 0, 60000);
    assert.deepEqual(errors, []);
    assert.equal(seen.length, 200);
    assert.deepEqual(seen.map((e) => e.client_msg_id), [...Array(200).keys()].map((i) => `del-${i}`));
    assert.ok(seen.every((e) => e.body === body));
    bob.close();
  });
});

test('a send made while the server is down is retried after the reconnect and stored once', async () => {
  const port = await freePort();
  const qim = await new Qim({ port }).start();
  try {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a), bob = client(qim, b);
    const bobs = inbox(bob);
    await alice.start();
    await bob.start();
    await alice.send({ to: b, body: 'before' });
    await waitFor('before', () => bobs.length >= 1);

    const states = [];
    alice.on('state', (s) => states.push(s));
    await qim.stop();
    await waitFor('alice notices', () => alice.state !== 'online');
    const pending = alice.send({ to: b, body: 'during', clientMsgId: 'during-1' });
    await qim.start(); // same data directory and port
    const ack = await pending;
    assert.equal(ack.client_msg_id, 'during-1');
    // Bob reconnects too and resumes from his cursor: 'during' once, 'before' not again.
    await waitFor('bob resumes', () => bobs.length >= 2);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(bobs.map((e) => e.body), ['before', 'during']);
    assert.ok(states.includes('offline') && states.includes('online'), states.join(','));
    alice.close();
    bob.close();
  } finally {
    await qim.destroy();
  }
});

test('wss:// with the development certificate; without trusting it the connection is refused', async () => {
  const qim = await new Qim({ tls: true }).start();
  try {
    assert.ok(qim.url.startsWith('wss://'));
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a), bob = client(qim, b);
    const bobs = inbox(bob);
    await alice.start();
    await bob.start();
    await alice.send({ to: b, body: 'over tls' });
    await waitFor('bob over tls', () => bobs.length >= 1);
    assert.equal(bobs[0].body, 'over tls');
    alice.close();
    bob.close();

    const untrusting = new QimClient({ url: qim.url, token: qim.token(a), createSocket: (u) => new WebSocket(u) });
    const errors = [];
    untrusting.on('error', (e) => errors.push(e));
    const started = untrusting.start();
    await waitFor('a refused handshake', () => untrusting.state === 'offline');
    assert.notEqual(untrusting.state, 'online');
    untrusting.close();
    await assert.rejects(started, (e) => e instanceof QimConnectionError);
    assert.ok(errors.some((e) => /certificate/.test(e.message)), errors.map((e) => e.message).join('; '));
  } finally {
    await qim.destroy();
  }
});
