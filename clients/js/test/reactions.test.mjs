// Reactions in the message-state fold (decision 145), without a server: counts per emoji and `mine` from the
// event entries (`~react`, `~unreact`, each carrying the count right after it), from HISTORY's aggregate
// plus the events after it, in any order, with duplicates and replays.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MessageStates, QimClient, QimError, directConversation, eventPreview, foldMessage, isMessageEventEntry, parseMessageEvent } from '../dist/index.js';
import { Qim, user, waitFor } from './qim.mjs';

const conv = 'g:team';
const msg = { seq: '10', message_id: '100', conversation: conv, sender: 'alice', sender_device: 'p', client_msg_id: 'c1', server_time: 1000, body: 'lunch?' };

// An event entry as the mailbox holds it; `id` is its position (message ids rise within a conversation).
function react(id, by, emoji, count, kind = 'react') {
  return {
    seq: String(id), message_id: String(id), conversation: conv, sender: by, sender_device: 'p', client_msg_id: `~${kind}`,
    server_time: 2000 + id, body: JSON.stringify({ event: kind, message_id: '100', by, emoji, count }),
  };
}
const unreact = (id, by, emoji, count) => react(id, by, emoji, count, 'unreact');

test('reaction entries are events: parsed, previewed, never a bubble', () => {
  const e = react(201, 'bob', '👍', 1);
  const ev = parseMessageEvent(e);
  assert.deepEqual([ev.kind, ev.target, ev.by, ev.emoji, ev.count, ev.event_id], ['react', '100', 'bob', '👍', 1, '201']);
  assert.equal(parseMessageEvent(unreact(202, 'bob', '👍', 0)).kind, 'unreact');
  assert.equal(isMessageEventEntry(e), true);
  const { client_msg_id: _, ...row } = e; // a list row's `last`: known by its body
  assert.equal(isMessageEventEntry(row), true);
  assert.equal(eventPreview(ev), 'reacted 👍');
  assert.equal(eventPreview(parseMessageEvent(unreact(202, 'bob', '👍', 0))), 'removed 👍');
  // Without an emoji it is no reaction event.
  assert.equal(parseMessageEvent({ ...e, body: JSON.stringify({ event: 'react', message_id: '100' }) }), null);
});

test('the fold: counts per emoji in first-added order, mine for the reader, zero counts gone', () => {
  const events = [react(201, 'bob', '👍', 1), react(202, 'carol', '🎉', 1), react(203, 'alice', '👍', 2), unreact(204, 'carol', '🎉', 0)];
  assert.deepEqual(foldMessage(msg, events, { me: 'alice' }).reactions, [{ emoji: '👍', count: 2, mine: true }]);
  assert.deepEqual(foldMessage(msg, events, { me: 'carol' }).reactions, [{ emoji: '👍', count: 2, mine: false }]);
  // Any order, duplicates, a replay of the whole run: the same state.
  const shuffled = [events[3], events[1], events[0], events[3], events[2], events[0], ...events];
  assert.deepEqual(foldMessage(msg, shuffled, { me: 'alice' }).reactions, [{ emoji: '👍', count: 2, mine: true }]);
  // Both kept while both held, in the order first added.
  const two = foldMessage(msg, [react(202, 'carol', '🎉', 1), react(201, 'bob', '👍', 1)], { me: 'carol' });
  assert.deepEqual(two.reactions, [{ emoji: '👍', count: 1, mine: false }, { emoji: '🎉', count: 1, mine: true }]);
  // React, unreact, react again by me: mine, count from the last event.
  const again = [react(201, 'bob', '👍', 1), unreact(205, 'bob', '👍', 0), react(209, 'bob', '👍', 1)];
  assert.deepEqual(foldMessage(msg, again, { me: 'bob' }).reactions, [{ emoji: '👍', count: 1, mine: true }]);
  // No events: none.
  assert.deepEqual(foldMessage(msg, []).reactions, []);
});

test("the fold: HISTORY's aggregate is the base; only events after it change it", () => {
  const fromHistory = { ...msg, reactions: [{ emoji: '👍', count: 3, mine: true }, { emoji: ':tada:', count: 1, mine: false }] };
  delete fromHistory.seq;
  // Events at or below what the page counted change nothing (a late push of an old event).
  const old = [react(201, 'bob', '👍', 1), react(202, 'carol', '👍', 2)];
  assert.deepEqual(foldMessage(fromHistory, old, { me: 'alice', reactionsThrough: '203' }).reactions, fromHistory.reactions);
  // Later ones do: I take mine back, dave adds one.
  const later = [...old, unreact(210, 'alice', '👍', 2), react(211, 'dave', '🔥', 1)];
  assert.deepEqual(foldMessage(fromHistory, later, { me: 'alice', reactionsThrough: '203' }).reactions, [
    { emoji: '👍', count: 2, mine: false },
    { emoji: ':tada:', count: 1, mine: false },
    { emoji: '🔥', count: 1, mine: false },
  ]);
  // A recalled message has none (HISTORY serves none).
  assert.deepEqual(foldMessage(fromHistory, [{ ...react(220, 'alice', 'x', 0, 'recall'), body: JSON.stringify({ event: 'recall', message_id: '100', by: 'alice' }) }]).reactions, []);
});

test('MessageStates: reactions before the message wait; duplicates and replays change nothing; the state says mine', () => {
  const states = new MessageStates(10_000, 1024, () => 'bob');
  assert.equal(states.applyEvent(react(201, 'bob', '👍', 1)), null); // waits for its message
  const s = states.applyMessage(msg);
  assert.deepEqual(s.reactions, [{ emoji: '👍', count: 1, mine: true }]);
  assert.equal(states.applyEvent(react(201, 'bob', '👍', 1)), null); // the same event again
  const two = states.applyEvent(react(202, 'carol', '👍', 2));
  assert.deepEqual(two.reactions, [{ emoji: '👍', count: 2, mine: true }]);
  const gone = states.applyEvent(unreact(203, 'bob', '👍', 1));
  assert.deepEqual(gone.reactions, [{ emoji: '👍', count: 1, mine: false }]);
  // A reload replays the mailbox from 0: the message, then its events, the same state.
  const replay = new MessageStates(10_000, 1024, () => 'bob');
  replay.applyMessage(msg);
  for (const e of [react(201, 'bob', '👍', 1), react(202, 'carol', '👍', 2), unreact(203, 'bob', '👍', 1)]) replay.applyEvent(e);
  assert.deepEqual(replay.get('100').reactions, states.get('100').reactions);
});

test('MessageStates: a HISTORY page counts the events held when it was asked; later ones fold on top', () => {
  const states = new MessageStates(10_000, 1024, () => 'bob');
  states.applyMessage(msg);
  states.applyEvent(react(201, 'bob', '👍', 1));
  const through = states.eventsThrough(conv); // asked with 201 held
  assert.equal(through, '201');
  const page = { ...msg, reactions: [{ emoji: '👍', count: 2, mine: true }] }; // the server had carol's too
  delete page.seq;
  assert.deepEqual(states.applyMessage(page, through).reactions, [{ emoji: '👍', count: 2, mine: true }]);
  // carol's event arrives late (its count is what the page said): nothing moves back.
  assert.equal(states.applyEvent(react(202, 'carol', '👍', 2)), null);
  // The mailbox's copy of the message as sent does not drop HISTORY's reactions.
  states.applyMessage(msg);
  assert.deepEqual(states.get('100').reactions, [{ emoji: '👍', count: 2, mine: true }]);
  assert.deepEqual(states.applyEvent(unreact(230, 'carol', '👍', 1)).reactions, [{ emoji: '👍', count: 1, mine: true }]);
});

test('MessageStates: a page asked with no event held folds every event that came meanwhile on top', () => {
  const states = new MessageStates(10_000, 1024, () => 'bob');
  assert.equal(states.eventsThrough(conv), undefined); // asked with nothing held
  states.applyEvent(react(201, 'carol', '🎉', 1)); // came while the page was on its way (not counted by it)
  const page = { ...msg, reactions: [] };
  delete page.seq;
  assert.deepEqual(states.applyMessage(page, null).reactions, [{ emoji: '🎉', count: 1, mine: false }]);
  // Not told when it was asked: the events held now are taken as counted.
  const other = new MessageStates(10_000, 1024, () => 'bob');
  other.applyEvent(react(201, 'carol', '🎉', 1));
  assert.deepEqual(other.applyMessage(page).reactions, []);
});

// Against a real `qim up`: REACT/UNREACT with the SDK, the other side folds them live, history() serves the
// aggregate with `mine` for its reader, a fresh device syncing from 0 folds the same.
describe('reactions against qim up', () => {
  let qim;
  before(async () => {
    qim = await new Qim().start();
  });
  after(async () => {
    await qim?.destroy();
  });

  test('react, unreact: ACKs, live states on the other side, history and a fresh device agree', async () => {
    const a = user('alice'), b = user('bob');
    const mk = (u, device = 'node') =>
      new QimClient({ url: qim.url, token: () => qim.token(u, device), createSocket: qim.socketFactory(), reconnectInitialMs: 50, reconnectMaxMs: 200 });
    const alice = mk(a), bob = mk(b);
    const events = [];
    bob.on('messageEvent', (e) => events.push(e.kind));
    await alice.start();
    await bob.start();
    const conv = directConversation(a, b);
    const ack = await alice.send({ to: b, body: 'lunch?' });
    await waitFor('bob holds the message', () => bob.messageState(ack.message_id) !== undefined);
    const r1 = await bob.react(conv, ack.message_id, '👍');
    assert.equal(r1.type, 'REACT_ACK');
    assert.equal(r1.target, ack.message_id);
    await alice.react(conv, ack.message_id, '👍');
    await alice.react(conv, ack.message_id, ':tada:');
    await waitFor('bob folds both', () => bob.messageState(ack.message_id)?.reactions.length === 2);
    assert.deepEqual(bob.messageState(ack.message_id).reactions, [
      { emoji: '👍', count: 2, mine: true },
      { emoji: ':tada:', count: 1, mine: false },
    ]);
    await assert.rejects(bob.react(conv, ack.message_id, '👍'), (e) => e instanceof QimError && e.code === 'REACTION_UNCHANGED');
    await bob.unreact(conv, ack.message_id, '👍');
    await waitFor('alice folds the unreact', () => alice.messageState(ack.message_id)?.reactions[0]?.count === 1);
    assert.deepEqual(alice.messageState(ack.message_id).reactions, [
      { emoji: '👍', count: 1, mine: true },
      { emoji: ':tada:', count: 1, mine: true },
    ]);
    assert.deepEqual(events.slice(0, 1), ['react']);
    // History: the server's aggregate, `mine` for bob; the same as his fold.
    const h = await bob.history(conv);
    assert.deepEqual(h.messages[0].reactions, [
      { emoji: '👍', count: 1, mine: false },
      { emoji: ':tada:', count: 1, mine: false },
    ]);
    assert.deepEqual(bob.messageState(ack.message_id).reactions, h.messages[0].reactions);
    // A fresh device of bob syncs from 0: the message, then its four events.
    const bob2 = mk(b, 'tablet');
    await bob2.start();
    await waitFor('the new device folds them', () => bob2.messageState(ack.message_id)?.reactions.length === 2);
    assert.deepEqual(bob2.messageState(ack.message_id).reactions, h.messages[0].reactions);
    alice.close();
    bob.close();
    bob2.close();
  });

});
