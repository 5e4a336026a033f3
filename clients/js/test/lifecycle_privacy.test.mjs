// Editing, recalling, blocking, muting, delete for me and session revocation with the SDK against a real
// `qim up`: the typed answers and refusals, the live events on the other side, the fold's states, and a
// revoked or expired session that does not reconnect with its token.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { QimClient, QimError, directConversation } from '../dist/index.js';
import { QIM_BINARY, Qim, user, waitFor } from './qim.mjs';

function client(qim, tokenOrFn, extra = {}) {
  return new QimClient({
    url: qim.url,
    token: tokenOrFn,
    createSocket: qim.socketFactory(),
    reconnectInitialMs: 50,
    reconnectMaxMs: 200,
    ...extra,
  });
}

function collect(c, event) {
  const got = [];
  c.on(event, (v) => got.push(v));
  return got;
}

describe('lifecycle and privacy against qim up', () => {
  let qim;
  before(async () => {
    qim = await new Qim().start();
  });
  after(async () => {
    await qim?.destroy();
  });

  test('edit and recall: ACKs, the other side folds each change live, history serves the state', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, () => qim.token(a)), bob = client(qim, () => qim.token(b));
    const states = collect(bob, 'messageState');
    const events = collect(bob, 'messageEvent');
    await alice.start();
    await bob.start();
    const conv = directConversation(a, b);
    const ack = await alice.send({ to: b, body: 'helo' });
    await waitFor('bob holds the message', () => bob.messageState(ack.message_id) !== undefined);
    const e1 = await alice.edit(conv, ack.message_id, 'hello');
    assert.equal(e1.type, 'EDIT_ACK');
    assert.equal(e1.target, ack.message_id);
    await alice.edit(conv, ack.message_id, 'hello, world');
    await waitFor('bob sees the second edit', () => bob.messageState(ack.message_id)?.edit_count === 2);
    assert.equal(bob.messageState(ack.message_id).body, 'hello, world');
    assert.deepEqual(events.map((e) => e.kind), ['edit', 'edit']);
    assert.ok(states.some((s) => s.body === 'hello'));
    // Bob may not edit alice's message.
    await assert.rejects(bob.edit(conv, ack.message_id, 'mine now'), (e) => e instanceof QimError && e.code === 'NOT_ALLOWED');
    const h = await bob.history(conv);
    assert.equal(h.messages[0].body, 'hello, world');
    assert.equal(h.messages[0].edit_count, 2);
    assert.ok(h.messages[0].edited_at > 0);

    const r = await alice.recall(conv, ack.message_id);
    assert.equal(r.type, 'RECALL_ACK');
    await waitFor('bob sees the recall', () => bob.messageState(ack.message_id)?.recalled === true);
    assert.equal(bob.messageState(ack.message_id).body, '');
    await assert.rejects(alice.edit(conv, ack.message_id, 'back'), (e) => e instanceof QimError && e.code === 'MESSAGE_RECALLED');
    await assert.rejects(alice.recall(conv, '12345'), (e) => e instanceof QimError && e.code === 'UNKNOWN_MESSAGE');
    const after = await alice.history(conv);
    assert.equal(after.messages[0].recalled, true);
    assert.equal(after.messages[0].body, '');

    // A fresh device of bob syncs from 0: the message first, its events after, folded to the tombstone.
    const bob2 = client(qim, () => qim.token(b, 'tablet'));
    await bob2.start();
    await waitFor('the new device folds the recall', () => bob2.messageState(ack.message_id)?.recalled === true);
    alice.close();
    bob.close();
    bob2.close();
  });

  test('block: the blocked user gets BLOCKED, the list is pushed to the other devices; unblock', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, () => qim.token(a)), bob = client(qim, () => qim.token(b));
    const bobPhone = client(qim, () => qim.token(b, 'phone'));
    const elsewhere = collect(bobPhone, 'block');
    await Promise.all([alice.start(), bob.start(), bobPhone.start()]);
    const ok = await bob.block(a);
    assert.deepEqual([ok.type, ok.user, ok.blocked], ['BLOCK_OK', a, true]);
    assert.deepEqual(await bob.blocks(), [a]);
    await assert.rejects(alice.send({ to: b, body: 'let me in' }), (e) => e instanceof QimError && e.code === 'BLOCKED');
    await waitFor('the other device hears of it', () => elsewhere.length >= 1);
    assert.deepEqual(elsewhere[0], { user: a, blocked: true, origin: 'elsewhere' });
    assert.deepEqual(bobPhone.blockedUsers, [a]);
    await bob.unblock(a);
    assert.deepEqual(bob.blockedUsers, []);
    await alice.send({ to: b, body: 'hi again' });
    alice.close();
    bob.close();
    bobPhone.close();
  });

  test('mute: no badge in the list (its own count stays); delete for me hides from my devices only', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, () => qim.token(a)), bob = client(qim, () => qim.token(b));
    await alice.start();
    await bob.start();
    const conv = directConversation(a, b);
    const m1 = await alice.send({ to: b, body: 'one' });
    await alice.send({ to: b, body: 'two' });
    await bob.conversations();
    await waitFor('bob counts two unread', () => bob.conversationList.find((r) => r.conversation === conv)?.unread === 2);
    const mutes = collect(bob, 'mute');
    const ok = await bob.mute(conv);
    assert.deepEqual([ok.type, ok.muted, ok.muted_until], ['MUTE_OK', true, null]);
    assert.equal(mutes[0].origin, 'here');
    const page = await bob.conversations();
    assert.equal(page.unread_conversations, 0);
    const row = bob.conversationList.find((r) => r.conversation === conv);
    assert.equal(row.muted, true);
    assert.equal(row.unread, 2);
    await bob.unmute(conv);
    assert.equal((await bob.conversations()).unread_conversations, 1);

    const del = await bob.deleteForMe(conv, m1.message_id);
    assert.deepEqual([del.type, del.message_id], ['DELETE_OK', m1.message_id]);
    const h = await bob.history(conv);
    assert.deepEqual(h.messages.map((m) => m.body), ['two']);
    assert.deepEqual((await alice.history(conv)).messages.map((m) => m.body), ['two', 'one']);
    // A fresh device of bob: the stub is not shown.
    const bob2 = client(qim, () => qim.token(b, 'tablet'));
    const shown = collect(bob2, 'message');
    const synced = collect(bob2, 'synced');
    await bob2.start();
    await waitFor('the new device syncs', () => synced.length >= 1);
    assert.deepEqual(shown.map((m) => m.body), ['two']);
    const all = await bob.deleteForMe(conv);
    assert.ok(all.through);
    alice.close();
    bob.close();
    bob2.close();
  });

  test('revoked (close 4001): a fixed token is not tried again; a token function is asked once for a new one', async () => {
    const a = user('alice');
    const revoke = () => execFileSync(QIM_BINARY, ['admin', 'sessions', 'revoke', a, '--data-dir', qim.dir]);
    const fixed = client(qim, qim.token(a, 'fixed'));
    const revokedFixed = collect(fixed, 'revoked');
    const states = collect(fixed, 'state');
    await fixed.start();
    // A token function that mints a fresh token (a new login) each time it is asked.
    let asked = 0;
    const fresh = client(qim, () => (asked++, qim.token(a, 'fresh')));
    const revokedFresh = collect(fresh, 'revoked');
    await fresh.start();
    // Tokens carry their issue time in ms: the revocation must come after both.
    await new Promise((r) => setTimeout(r, 5));
    revoke();
    await waitFor('the fixed-token client is told and stops', () => revokedFixed.length === 1 && fixed.state === 'closed');
    assert.match(revokedFixed[0].reason, /session revoked/);
    assert.equal(states.filter((s) => s === 'connecting').length, 1); // no second connect
    await waitFor('the other client is told and is back online with a new token', () => revokedFresh.length === 1 && fresh.state === 'online' && asked >= 2);
    fresh.close();

    // A token function that can only give the revoked token: one try, then closed (no loop).
    const stale = qim.token(a, 'stale');
    await new Promise((r) => setTimeout(r, 5));
    const staleClient = client(qim, () => stale);
    let staleAsked = 0;
    staleClient.on('state', (s) => s === 'connecting' && staleAsked++);
    const revokedStale = collect(staleClient, 'revoked');
    await staleClient.start();
    await new Promise((r) => setTimeout(r, 5));
    revoke();
    await waitFor('closed after the revoked token came back', () => staleClient.state === 'closed');
    assert.equal(revokedStale.length, 1);
    assert.equal(staleAsked, 2);
  });

  test('expired: the close says so, and a token function gives a fresh token', async () => {
    const a = user('alice');
    const short = () => execFileSync(QIM_BINARY, ['token', '--user', a, '--device', 'x', '--ttl', '1'], {
      env: { ...process.env, QIM_AUTH_SECRET: 'sdk-test-secret-0123456789abcdef' },
    }).toString().trim();
    let asked = 0;
    const c = client(qim, () => (asked++, short()));
    const expired = collect(c, 'expired');
    await c.start();
    await waitFor('the token expires and a fresh one is used', () => expired.length >= 1 && asked >= 2 && c.state === 'online', 10_000);
    assert.match(expired[0].reason, /token expired/);
    c.close();
  });
});
