// The client loop's gap healing, frame by frame, against a scripted socket (no server: what a real one
// cannot be made to do on demand — a push after a hole, SYNC_NEEDED in the middle of a SYNC).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QimClient } from '../dist/index.js';

class ScriptedSocket {
  constructor() {
    this.readyState = 0;
    this.sent = [];
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    queueMicrotask(() => {
      this.readyState = 1;
      this.onopen?.({});
    });
  }
  send(text) {
    this.sent.push(JSON.parse(text));
  }
  close() {
    this.readyState = 3;
  }
  push(frame) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  last(type) {
    return this.sent.filter((f) => f.type === type).at(-1);
  }
}

const tick = () => new Promise((r) => setTimeout(r, 5));
const entry = (seq, body) => ({
  seq: String(seq),
  message_id: String(1000 + seq),
  conversation: 'd:a:b',
  sender: 'a',
  sender_device: 'd',
  client_msg_id: `c${seq}`,
  server_time: seq,
  body,
});

async function connected() {
  let socket;
  const c = new QimClient({ url: 'ws://test/', token: 't', createSocket: () => (socket = new ScriptedSocket()) });
  const shown = [];
  c.on('message', (e) => shown.push(e.body));
  const started = c.start();
  await tick();
  socket.push({ type: 'AUTH_OK', ref: socket.last('AUTH').ref, v: 1, user: 'b', device: 'd', expires_at: 0, delivery: 'hybrid' });
  await started;
  return { c, socket, shown };
}

test('a push after a hole is held, the hole is SYNCed, then the push applies once', async () => {
  const { c, socket, shown } = await connected();
  const first = socket.last('SYNC');
  assert.equal(first.after, '0');
  socket.push({ type: 'SYNC_PAGE', ref: first.ref, entries: [entry(5, 'one')], frontier: '5', trim: '0', more: false, gap_through: null });
  await tick();
  assert.equal(c.cursor, '5');
  // Continues (from 5 <= cursor 5): applied directly.
  socket.push({ type: 'DELIVER', entries: [entry(7, 'two')], from: '5', frontier: '7' });
  assert.deepEqual(shown, ['one', 'two']);
  // After a hole (from 9 > cursor 7): nothing shown, a SYNC from 7 instead.
  socket.push({ type: 'DELIVER', entries: [entry(11, 'four')], from: '9', frontier: '11' });
  assert.deepEqual(shown, ['one', 'two']);
  const heal = socket.last('SYNC');
  assert.equal(heal.after, '7');
  // The SYNC returns the missing entry and the pushed one (a page and a push may overlap).
  socket.push({ type: 'SYNC_PAGE', ref: heal.ref, entries: [entry(9, 'three'), entry(11, 'four')], frontier: '11', trim: '0', more: false, gap_through: null });
  await tick();
  assert.deepEqual(shown, ['one', 'two', 'three', 'four']);
  assert.equal(c.cursor, '11');
  c.close();
});

test('SYNC_NEEDED during a SYNC means another SYNC after it; pages follow `more`', async () => {
  const { c, socket, shown } = await connected();
  const first = socket.last('SYNC');
  socket.push({ type: 'SYNC_NEEDED', reason: 'test' });
  socket.push({ type: 'SYNC_PAGE', ref: first.ref, entries: [entry(1, 'a'), entry(2, 'b')], frontier: '9', trim: '0', more: true, gap_through: null });
  await tick();
  const second = socket.last('SYNC');
  assert.equal(second.after, '2'); // the next page of the same run
  socket.push({ type: 'SYNC_PAGE', ref: second.ref, entries: [entry(3, 'c')], frontier: '9', trim: '0', more: false, gap_through: null });
  await tick();
  const third = socket.last('SYNC');
  assert.notEqual(third.ref, second.ref); // the run SYNC_NEEDED asked for
  assert.equal(third.after, '9');
  socket.push({ type: 'SYNC_PAGE', ref: third.ref, entries: [entry(10, 'd')], frontier: '10', trim: '0', more: false, gap_through: null });
  await tick();
  assert.deepEqual(shown, ['a', 'b', 'c', 'd']);
  assert.equal(c.cursor, '10');
  c.close();
});

test('EXPIRED_CURSOR: SYNC from 0 but show only what is above the old cursor', async () => {
  let socket;
  const store = { v: '50', load: () => store.v, save: (x) => (store.v = x) };
  const c = new QimClient({ url: 'ws://test/', token: 't', cursorStore: store, createSocket: () => (socket = new ScriptedSocket()) });
  const shown = [];
  c.on('message', (e) => shown.push(e.body));
  const started = c.start();
  await tick();
  socket.push({ type: 'AUTH_OK', ref: socket.last('AUTH').ref, v: 1, user: 'b', device: 'd', expires_at: 0, delivery: 'hybrid' });
  await started;
  const first = socket.last('SYNC');
  assert.equal(first.after, '50');
  socket.push({ type: 'ERROR', ref: first.ref, code: 'EXPIRED_CURSOR', message: 'below the trim' });
  await tick();
  const again = socket.last('SYNC');
  assert.equal(again.after, '0');
  socket.push({ type: 'SYNC_PAGE', ref: again.ref, entries: [entry(40, 'old'), entry(60, 'new')], frontier: '60', trim: '30', more: false, gap_through: null });
  await tick();
  assert.deepEqual(shown, ['new']);
  assert.equal(store.v, '60');
  c.close();
});

test('a SEND refused with UNAVAILABLE is retried with the same client_msg_id; FORBIDDEN is not', async () => {
  let socket;
  const c = new QimClient({
    url: 'ws://test/',
    token: 't',
    reconnectInitialMs: 5,
    createSocket: () => (socket = new ScriptedSocket()),
  });
  const started = c.start();
  await tick();
  socket.push({ type: 'AUTH_OK', ref: socket.last('AUTH').ref, v: 1, user: 'a', device: 'd', expires_at: 0, delivery: 'hybrid' });
  await started;
  const sending = c.send({ to: 'b', body: 'hi' });
  await tick();
  const first = socket.last('SEND');
  socket.push({ type: 'ERROR', ref: first.ref, code: 'UNAVAILABLE', message: 'log unavailable' });
  let second;
  for (let i = 0; i < 100 && !second; i++) {
    await tick();
    second = socket.sent.filter((f) => f.type === 'SEND')[1];
  }
  assert.ok(second, 'retried');
  assert.equal(second.client_msg_id, first.client_msg_id);
  assert.notEqual(second.ref, first.ref);
  socket.push({ type: 'SEND_ACK', ref: second.ref, client_msg_id: second.client_msg_id, message_id: '77', conversation: 'd:a:b', server_time: 1, duplicate: false });
  const ack = await sending;
  assert.equal(ack.message_id, '77');

  const refused = c.send({ to: 'c', body: 'no' });
  await tick();
  const third = socket.last('SEND');
  socket.push({ type: 'ERROR', ref: third.ref, code: 'FORBIDDEN', message: 'no' });
  await assert.rejects(refused, (e) => e.code === 'FORBIDDEN');
  await tick();
  assert.equal(socket.sent.filter((f) => f.type === 'SEND').length, 3);
  c.close();
});

test('a message stored once per epoch (split brain) is shown once; the window is bounded and kept with the cursor', async () => {
  const copy = (seq, id, body) => ({ ...entry(0, body), seq: String(seq), message_id: String(id) });
  const e1 = 1n << 48n, e2 = 2n << 48n;
  let socket;
  const store = {
    v: null,
    ids: null,
    load: () => store.v,
    save: (x) => (store.v = x),
    loadRecentIds: () => store.ids,
    saveRecentIds: (ids) => (store.ids = ids),
  };
  const open = async (options) => {
    const c = new QimClient({ url: 'ws://test/', token: 't', cursorStore: store, createSocket: () => (socket = new ScriptedSocket()), ...options });
    const shown = [];
    c.on('message', (e) => shown.push(e.body));
    const started = c.start();
    await tick();
    socket.push({ type: 'AUTH_OK', ref: socket.last('AUTH').ref, v: 1, user: 'b', device: 'd', expires_at: 0, delivery: 'hybrid' });
    await started;
    return { c, shown };
  };
  const { c, shown } = await open({});
  // Messages 1..3 at epoch 1 (the stale owner's), 1..4 at epoch 2 (the new owner's), in seq order.
  const entries = [1, 2, 3].map((n) => copy(e1 + BigInt(n), n, `m${n}`)).concat([1, 2, 3, 4].map((n) => copy(e2 + BigInt(n), n, `m${n}`)));
  socket.push({ type: 'SYNC_PAGE', ref: socket.last('SYNC').ref, entries, frontier: String(e2 + 4n), trim: '0', more: false, gap_through: null });
  await tick();
  assert.deepEqual(shown, ['m1', 'm2', 'm3', 'm4']);
  assert.equal(c.duplicates, 3);
  assert.equal(c.cursor, String(e2 + 4n)); // the skipped copies are behind the cursor too
  // A push of a copy is skipped too.
  socket.push({ type: 'DELIVER', entries: [copy(e2 + 5n, 2, 'm2'), copy(e2 + 6n, 5, 'm5')], from: String(e2 + 4n), frontier: String(e2 + 6n) });
  assert.deepEqual(shown, ['m1', 'm2', 'm3', 'm4', 'm5']);
  assert.deepEqual(store.ids, ['1', '2', '3', '4', '5']);
  c.close();

  // A new client on the same store: the ids came with the cursor, so a later copy of message 5 is skipped.
  const again = await open({ dedupWindow: 2 });
  socket.push({ type: 'SYNC_PAGE', ref: socket.last('SYNC').ref, entries: [copy(e2 + 7n, 5, 'm5'), copy(e2 + 8n, 6, 'm6'), copy(e2 + 9n, 7, 'm7'), copy(e2 + 10n, 6, 'm6')], frontier: String(e2 + 10n), trim: '0', more: false, gap_through: null });
  await tick();
  assert.deepEqual(again.shown, ['m6', 'm7']);
  assert.deepEqual(store.ids, ['6', '7']); // bounded: the window holds 2
  again.c.close();
});
