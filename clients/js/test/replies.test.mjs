// Replies in the SDK (decision 125, the server side being built to the same field names): SEND's
// `reply_to` from send({replyTo}), and `reply_to` / `quote` carried into the message's state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MessageStates, QimClient, foldMessage } from '../dist/index.js';
import { Qim, user } from './qim.mjs';

const conv = 'd:alice:bob';
const reply = {
  seq: '12', message_id: '102', conversation: conv, sender: 'bob', sender_device: 'p', client_msg_id: 'c2', server_time: 1100,
  body: 'yes!', reply_to: '100', quote: { message_id: '100', sender: 'alice', body: 'lunch?', truncated: false },
};

test('the fold keeps reply_to and the quote (a body, or recalled)', () => {
  const s = foldMessage(reply, []);
  assert.equal(s.reply_to, '100');
  assert.deepEqual(s.quote, { message_id: '100', sender: 'alice', body: 'lunch?', truncated: false });
  const gone = foldMessage({ ...reply, quote: { message_id: '100', recalled: true } }, []);
  assert.deepEqual(gone.quote, { message_id: '100', recalled: true });
  // A plain message has neither.
  const { reply_to: _r, quote: _q, ...plain } = reply;
  const p = foldMessage(plain, []);
  assert.equal('reply_to' in p, false);
  assert.equal('quote' in p, false);
  const states = new MessageStates();
  assert.equal(states.applyMessage(reply).reply_to, '100');
});

describe('replies against qim up', () => {
  let qim;
  before(async () => {
    qim = await new Qim().start();
  });
  after(async () => {
    await qim?.destroy();
  });

  test('send({replyTo}) carries reply_to in the SEND frame', async () => {
    const a = user('alice'), b = user('bob');
    const sent = [];
    const alice = new QimClient({
      url: qim.url,
      token: qim.token(a),
      createSocket: (u) => {
        const s = qim.socketFactory()(u);
        const send = s.send.bind(s);
        s.send = (d) => (sent.push(JSON.parse(d)), send(d));
        return s;
      },
    });
    await alice.start();
    const first = await alice.send({ to: b, body: 'first' });
    await alice.send({ to: b, body: 'a reply', replyTo: first.message_id });
    const sends = sent.filter((f) => f.type === 'SEND');
    assert.equal(sends[0].reply_to, undefined); // a plain SEND has none
    assert.equal(sends[1].reply_to, first.message_id);
    alice.close();
  });
});

// The page's quote of a reply (clients/web/state.js quoteOf): the replied message as the page holds it now,
// else the server's quote; what the browser test cannot check until the server keeps reply_to.
test('the page quotes a reply: the held message as it is now, else the server quote, recalled as such', async () => {
  const { conversation, quoteOf, reset, state, upsert } = await import('../../web/state.js');
  reset();
  state.me = 'bob';
  const c = conversation('d:alice:bob');
  const target = { seq: '10', message_id: '100', conversation: c.id, sender: 'alice', client_msg_id: 'c1', server_time: 1000, body: 'lunch?' };
  const r = { ...reply, conversation: c.id };
  // Not held (older than what the page loaded): the server's quote.
  assert.deepEqual(quoteOf(c, r), { sender: 'alice', text: 'lunch?', recalled: false });
  assert.deepEqual(quoteOf(c, { ...r, quote: { ...r.quote, body: 'x'.repeat(100), truncated: true } }).text, `${'x'.repeat(100)}…`);
  assert.deepEqual(quoteOf(c, { ...r, quote: { message_id: '100', recalled: true } }), { sender: null, text: 'message recalled', recalled: true });
  // Held: as it is now (edited since the server quoted it, then recalled), cut to 100 characters.
  upsert(c, { ...target, body: 'lunch at 1?' });
  assert.deepEqual(quoteOf(c, r), { sender: 'alice', text: 'lunch at 1?', recalled: false });
  upsert(c, { ...target, body: '🍕'.repeat(120) });
  assert.equal(quoteOf(c, r).text, `${'🍕'.repeat(100)}…`);
  upsert(c, { ...target, recalled: true, body: '' });
  assert.deepEqual(quoteOf(c, r), { sender: 'alice', text: 'message recalled', recalled: true });
  // Not a reply: nothing.
  assert.equal(quoteOf(c, target), null);
  reset();
});
