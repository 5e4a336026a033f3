// The inbox, typing and presence in the SDK, frame by frame against a fake server (a scripted socket that
// records what the client sends and pushes what a server would): the frames as docs/protocol.md has them,
// the typed events, and the conversation list the client keeps current from a first CONVERSATIONS page,
// the mailbox's entries and the read-state pushes (no double count of an entry the page already counted,
// a refetch where a count could be off). ConversationList's rules on their own first.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { ConversationList, QimClient, countsAsUnread, unreadLabel } from '../dist/index.js';

class FakeServer {
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
  all(type) {
    return this.sent.filter((f) => f.type === type);
  }
  last(type) {
    return this.all(type).at(-1);
  }
  // The server going away (the client reconnects with a new FakeServer).
  drop() {
    this.readyState = 3;
    this.onclose?.({ code: 1006, reason: 'gone' });
  }
}

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));
const ME = 'bob';
const AB = 'd:alice:bob';
const BC = 'd:bob:carol';
let nextId = 1000;
const entry = (seq, conversation = AB, sender = 'alice', body = `m${seq}`, client_msg_id = `c${seq}`) => ({
  seq: String(seq),
  message_id: String(nextId++),
  conversation,
  sender,
  sender_device: 'd',
  client_msg_id,
  server_time: seq,
  body,
});
const row = (conversation, last, read_seq, unread, extra = {}) => ({
  conversation,
  kind: conversation.startsWith('d:') ? 'direct' : 'group',
  ...(conversation.startsWith('d:') ? { peer: conversation.split(':').find((p) => p !== 'd' && p !== ME) } : {}),
  last,
  read_seq: String(read_seq),
  unread,
  unread_capped: false,
  peer_read_through: null,
  peer_delivered_through: null,
  ...extra,
});

const clients = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

// A client online as bob, its first SYNC answered with `entries`; `events` records every typed event.
async function online(entries = [], options = {}) {
  const servers = [];
  const c = new QimClient({
    url: 'ws://test/',
    token: 't',
    reconnectInitialMs: 5,
    reconnectMaxMs: 10,
    createSocket: () => {
      servers.push(new FakeServer());
      return servers.at(-1);
    },
    ...options,
  });
  clients.push(c);
  const events = { read: [], receipt: [], delivered: [], typing: [], presence: [], conversations: [], error: [] };
  for (const k of Object.keys(events)) c.on(k, (v) => events[k].push(v));
  const connect = async (first) => {
    await tick();
    const s = servers.at(-1);
    s.push({ type: 'AUTH_OK', ref: s.last('AUTH').ref, v: 1, user: ME, device: 'd', expires_at: 0, delivery: 'hybrid' });
    if (first) await first;
    await tick();
    s.push({ type: 'SYNC_PAGE', ref: s.last('SYNC').ref, entries, frontier: entries.at(-1)?.seq ?? '0', trim: '0', more: false, gap_through: null });
    await tick();
  };
  await connect(c.start());
  return { c, server: () => servers.at(-1), events, reconnect: () => connect(null) };
}

// Answers the client's last CONVERSATIONS with these rows.
function answerPage(s, conversations, next_before = null) {
  const ask = s.last('CONVERSATIONS');
  s.push({ type: 'CONVERSATIONS_PAGE', ref: ask.ref, conversations, next_before, unread_conversations: conversations.filter((r) => r.unread > 0).length });
  return ask;
}

const counts = (list) => Object.fromEntries(list.map((r) => [r.conversation, r.unread]));

describe('the unread rule and the list on their own', () => {
  test('countsAsUnread: others\u2019 messages count, mine and system entries do not', () => {
    assert.equal(countsAsUnread({ sender: 'alice', client_msg_id: 'c1' }, ME), true);
    assert.equal(countsAsUnread({ sender: ME, client_msg_id: 'c1' }, ME), false);
    assert.equal(countsAsUnread({ sender: 'alice', client_msg_id: '~group:add' }, ME), false);
    assert.equal(unreadLabel({ unread: 0, unread_capped: false }), '');
    assert.equal(unreadLabel({ unread: 3, unread_capped: false }), '3');
    assert.equal(unreadLabel({ unread: 999, unread_capped: true }), '999+');
  });

  test('an entry counts only above the row\u2019s last and its read mark; a cap stays a cap', () => {
    const l = new ConversationList(() => ME);
    assert.equal(l.applyEntry(entry(5)), 'unchanged'); // nothing is tracked before a first page
    l.applyPage({ type: 'CONVERSATIONS_PAGE', conversations: [row(AB, entry(10), 8, 1)], next_before: null, unread_conversations: 1 }, true);
    assert.equal(l.applyEntry(entry(9)), 'unchanged'); // at or below last: the server counted it
    assert.equal(l.applyEntry(entry(10)), 'unchanged');
    assert.equal(l.applyEntry(entry(11)), 'changed');
    assert.equal(l.applyEntry(entry(12, AB, ME)), 'changed'); // mine: the preview moves, the count does not
    assert.equal(l.applyEntry(entry(13, AB, 'alice', '{}', '~group:x')), 'changed');
    assert.equal(l.get(AB).unread, 2);
    assert.equal(l.get(AB).last.seq, '13');
    l.applyRead({ conversation: AB, read_seq: '13', unread: 0, unread_capped: false });
    assert.equal(l.get(AB).unread, 0);
    assert.equal(l.applyRead({ conversation: AB, read_seq: '11', unread: 2, unread_capped: false }), false); // marks only rise
    l.applyRead({ conversation: AB, read_seq: '13', unread: 999, unread_capped: true });
    l.applyEntry(entry(14));
    assert.deepEqual([l.get(AB).unread, l.get(AB).unread_capped], [999, true]);
  });

  test('a conversation past the pages held: its old entries are ignored, a new one makes a row', () => {
    const l = new ConversationList(() => ME);
    l.applyPage({ type: 'CONVERSATIONS_PAGE', conversations: [row(AB, entry(50), 50, 0)], next_before: '50', unread_conversations: 0 }, true);
    assert.equal(l.applyEntry(entry(20, BC, 'carol')), 'unchanged');
    assert.equal(l.get(BC), undefined);
    assert.equal(l.applyEntry(entry(51, BC, 'carol')), 'unknown');
    assert.deepEqual(l.list().map((r) => [r.conversation, r.peer, r.unread]), [[BC, 'carol', 1], [AB, 'alice', 0]]);
  });

  test('receipts and delivery only rise, and only from the peer of a direct conversation', () => {
    const l = new ConversationList(() => ME);
    l.applyPage({ type: 'CONVERSATIONS_PAGE', conversations: [row(AB, entry(5), 5, 0, { peer_read_through: '300' })], next_before: null, unread_conversations: 0 }, true);
    assert.equal(l.applyReceipt({ conversation: AB, user: 'alice', read_through: '200' }), false);
    assert.equal(l.applyReceipt({ conversation: AB, user: ME, read_through: '900' }), false);
    assert.equal(l.applyReceipt({ conversation: AB, user: 'alice', read_through: '1000' }), true);
    assert.equal(l.get(AB).peer_read_through, '1000');
    assert.equal(l.applyDelivered({ conversation: AB, message_id: '1200' }), true);
    assert.equal(l.applyDelivered({ conversation: AB, message_id: '1100' }), false);
    assert.equal(l.get(AB).peer_delivered_through, '1200');
  });
});

describe('the client against a fake server', () => {
  test('CONVERSATIONS, then the list follows DELIVER and READ_STATE; one `conversations` event per change', async () => {
    const { c, server, events } = await online([entry(1), entry(2)]);
    const asking = c.conversations({ limit: 20 });
    await tick();
    const ask = answerPage(server(), [row(AB, entry(2), 0, 2), row(BC, entry(1, BC, 'carol'), 1, 0)]);
    assert.deepEqual({ ...ask, ref: 'x' }, { type: 'CONVERSATIONS', ref: 'x', limit: 20 });
    const page = await asking;
    assert.equal(page.unread_conversations, 1);
    assert.deepEqual(counts(events.conversations.at(-1)), { [AB]: 2, [BC]: 0 });

    // Carol writes: her conversation moves to the top with 1 unread.
    server().push({ type: 'DELIVER', entries: [entry(3, BC, 'carol')], from: '2', frontier: '3' });
    let list = events.conversations.at(-1);
    assert.deepEqual(list.map((r) => r.conversation), [BC, AB]);
    assert.deepEqual(counts(list), { [AB]: 2, [BC]: 1 });
    assert.equal(list[0].last.body, 'm3');

    // Another device of bob read alice's: a `read` event from elsewhere and the count gone.
    server().push({ type: 'READ_STATE', conversation: AB, read_seq: '2', unread: 0, unread_capped: false });
    assert.deepEqual(events.read.at(-1), { conversation: AB, read_seq: '2', unread: 0, unread_capped: false, origin: 'elsewhere' });
    assert.deepEqual(counts(events.conversations.at(-1)), { [AB]: 0, [BC]: 1 });
    assert.equal(server().all('CONVERSATIONS').length, 1); // unread 0 is exact: nothing to read again
    assert.deepEqual(c.conversationList.map((r) => r.unread), [1, 0]);
  });

  test('markRead sends READ (default: the last entry known) and READ_OK sets the count', async () => {
    const { c, server, events } = await online([entry(7, BC, 'carol')]);
    const asking = c.conversations();
    await tick();
    answerPage(server(), [row(BC, entry(7, BC, 'carol'), 0, 1)]);
    await asking;
    assert.equal(server().last('CONVERSATIONS').limit, 50);
    const reading = c.markRead(BC);
    await tick();
    const read = server().last('READ');
    assert.deepEqual({ ...read, ref: 'x' }, { type: 'READ', ref: 'x', conversation: BC, seq: '7' });
    server().push({ type: 'READ_OK', ref: read.ref, conversation: BC, read_seq: '7', unread: 0, unread_capped: false });
    const ok = await reading;
    assert.equal(ok.read_seq, '7');
    assert.equal(events.read.at(-1).origin, 'here');
    assert.equal(c.conversationList[0].unread, 0);
    c.markRead(BC, '5').catch(() => {});
    await tick();
    assert.equal(server().last('READ').seq, '5');
    await assert.rejects(c.markRead('d:bob:nobody'), /no seq given/);
  });

  test('an entry arriving while CONVERSATIONS is out is counted once: not if the page covers it, yes if newer', async () => {
    const { c, server, events } = await online([entry(1)]);
    const asking = c.conversations();
    await tick();
    // Entries 2 and 3 reach the client before the page; the server read the list when 2 was visible.
    server().push({ type: 'DELIVER', entries: [entry(2), entry(3)], from: '1', frontier: '3' });
    answerPage(server(), [row(AB, entry(2), 0, 2)]);
    await asking;
    assert.equal(c.conversationList[0].unread, 3);
    assert.equal(c.conversationList[0].last.seq, '3');
    assert.equal(events.conversations.length, 1);
  });

  test('a count that may include entries on their way, and a new conversation, read the first page again', async () => {
    const { c, server } = await online([entry(1)]);
    const asking = c.conversations({ limit: 10 });
    await tick();
    answerPage(server(), [row(AB, entry(1), 0, 1)]);
    await asking;
    // Another device read up to 1 but the server already holds 2 (unread 1): the page is read again.
    server().push({ type: 'READ_STATE', conversation: AB, read_seq: '1', unread: 1, unread_capped: false });
    await tick();
    assert.equal(server().all('CONVERSATIONS').length, 2);
    assert.equal(server().last('CONVERSATIONS').limit, 10);
    server().push({ type: 'DELIVER', entries: [entry(2)], from: '1', frontier: '2' }); // on its way: counted by the page
    answerPage(server(), [row(AB, entry(2), 1, 1)]);
    await tick();
    assert.equal(c.conversationList[0].unread, 1);

    // A conversation the list does not have: a row at once, and the server's after the refetch.
    server().push({ type: 'DELIVER', entries: [entry(3, BC, 'carol')], from: '2', frontier: '3' });
    assert.deepEqual(counts(c.conversationList), { [BC]: 1, [AB]: 1 });
    await tick();
    assert.equal(server().all('CONVERSATIONS').length, 3);
    answerPage(server(), [row(BC, entry(3, BC, 'carol'), 0, 1), row(AB, entry(2), 1, 1)]);
    await tick();
    assert.deepEqual(counts(c.conversationList), { [BC]: 1, [AB]: 1 });
  });

  test('after a reconnect the list is read again (pushes sent while offline are lost)', async () => {
    const { c, server, reconnect } = await online([entry(1)]);
    const asking = c.conversations();
    await tick();
    answerPage(server(), [row(AB, entry(1), 0, 1)]);
    await asking;
    const before = server();
    before.drop();
    await tick(30);
    assert.notEqual(server(), before);
    await reconnect();
    assert.equal(server().all('CONVERSATIONS').length, 1);
    answerPage(server(), [row(AB, entry(1), 1, 0)]);
    await tick();
    assert.equal(c.conversationList[0].unread, 0);
  });

  test('RECEIPT and DELIVERED: typed events, and the direct conversation\u2019s row follows', async () => {
    const { c, server, events } = await online([entry(1, AB, ME)]);
    const asking = c.conversations();
    await tick();
    answerPage(server(), [row(AB, entry(1, AB, ME), 1, 0, { peer_delivered_through: '5' })]);
    await asking;
    server().push({ type: 'DELIVERED', conversation: AB, user: 'alice', message_id: '77' });
    server().push({ type: 'RECEIPT', conversation: AB, user: 'alice', read_through: '77' });
    server().push({ type: 'RECEIPT', conversation: 'g:team', user: 'carol', read_through: '80' });
    assert.deepEqual(events.delivered, [{ type: 'DELIVERED', conversation: AB, user: 'alice', message_id: '77' }]);
    assert.deepEqual(events.receipt.map((r) => `${r.conversation} ${r.user} ${r.read_through}`), [`${AB} alice 77`, 'g:team carol 80']);
    assert.equal(c.conversationList[0].peer_delivered_through, '77');
    assert.equal(c.conversationList[0].peer_read_through, '77');
  });

  test('RECEIPTS and SETTINGS: the frames and their answers', async () => {
    const { c, server } = await online();
    const asking = c.receipts('g:team', '123');
    await tick();
    const ask = server().last('RECEIPTS');
    assert.deepEqual({ ...ask, ref: 'x' }, { type: 'RECEIPTS', ref: 'x', conversation: 'g:team', message_id: '123' });
    server().push({ type: 'RECEIPTS_PAGE', ref: ask.ref, conversation: 'g:team', message_id: '123', read_count: 2, readers: ['carol', 'dave'] });
    assert.deepEqual((await asking).readers, ['carol', 'dave']);

    const reading = c.settings();
    await tick();
    const read = server().last('SETTINGS');
    assert.deepEqual(Object.keys(read).sort(), ['ref', 'type']); // no fields: read
    server().push({ type: 'SETTINGS_OK', ref: read.ref, settings: { receipts: 'on', presence: 'everyone' } });
    assert.deepEqual(await reading, { receipts: 'on', presence: 'everyone' });
    const changing = c.settings({ receipts: 'off', presence: 'contacts' });
    await tick();
    const change = server().last('SETTINGS');
    assert.deepEqual({ ...change, ref: 'x' }, { type: 'SETTINGS', ref: 'x', receipts: 'off', presence: 'contacts' });
    server().push({ type: 'ERROR', ref: change.ref, code: 'INVALID_ARGUMENT', message: 'presence' });
    await assert.rejects(changing, (e) => e.code === 'INVALID_ARGUMENT');
  });
});

describe('typing and presence against a fake server', () => {
  test('TYPING out: one start per interval and conversation, no ref; a stop only after a start', async () => {
    const { c, server } = await online([], { typingIntervalMs: 40 });
    assert.equal(c.typing(AB), true);
    assert.equal(c.typing(AB), false); // within the interval
    assert.equal(c.typing(BC), true); // another conversation
    assert.deepEqual(server().all('TYPING'), [
      { type: 'TYPING', conversation: AB },
      { type: 'TYPING', conversation: BC },
    ]);
    await tick(50);
    assert.equal(c.typing(AB), true);
    assert.equal(c.typing(AB, 'stop'), true);
    assert.equal(c.typing(AB, 'stop'), false);
    assert.deepEqual(server().all('TYPING').slice(2), [
      { type: 'TYPING', conversation: AB },
      { type: 'TYPING', conversation: AB, state: 'stop' },
    ]);
    // A refusal is an `error` event (no request waits for it).
    server().push({ type: 'ERROR', code: 'RATE_LIMITED', message: 'typing' });
  });

  test('TYPING in: a start with its expiry, ended by the expiry, a stop, or a message of that user', async () => {
    const { c, server, events } = await online();
    const t0 = Date.now();
    server().push({ type: 'TYPING', conversation: AB, user: 'alice', state: 'start', expires_in_ms: 40 });
    assert.deepEqual(c.typingUsers(AB), ['alice']);
    const start = events.typing.at(-1);
    assert.equal(start.state, 'start');
    assert.ok(start.expiresAt >= t0 + 40 && start.expiresAt <= Date.now() + 40);
    await tick(80);
    assert.deepEqual(c.typingUsers(AB), []);
    assert.deepEqual(events.typing.at(-1), { conversation: AB, user: 'alice', state: 'stop', reason: 'expired' });

    server().push({ type: 'TYPING', conversation: AB, user: 'alice', state: 'start', expires_in_ms: 6000 });
    server().push({ type: 'TYPING', conversation: AB, user: 'alice', state: 'stop' });
    assert.equal(events.typing.at(-1).reason, 'stop');
    server().push({ type: 'TYPING', conversation: AB, user: 'alice', state: 'start', expires_in_ms: 6000 });
    server().push({ type: 'DELIVER', entries: [entry(1)], from: '0', frontier: '1' });
    assert.equal(events.typing.at(-1).reason, 'message');
    assert.deepEqual(c.typingUsers(AB), []);
  });

  test('PRESENCE_SUBSCRIBE answers the state now; PRESENCE pushes change it', async () => {
    const { c, server, events } = await online();
    const asking = c.subscribePresence(['carol', 'dave']);
    await tick();
    const ask = server().last('PRESENCE_SUBSCRIBE');
    assert.deepEqual(ask.users, ['carol', 'dave']);
    server().push({
      type: 'PRESENCE_STATE',
      ref: ask.ref,
      users: [
        { user: 'carol', status: 'online', last_seen: null },
        { user: 'dave', status: 'offline', last_seen: 1800000000000 },
      ],
    });
    assert.equal((await asking).length, 2);
    assert.equal(c.presence('carol').status, 'online');
    server().push({ type: 'PRESENCE', user: 'carol', status: 'offline', last_seen: 1800000000500 });
    assert.deepEqual(c.presence('carol'), { user: 'carol', status: 'offline', last_seen: 1800000000500 });
    assert.deepEqual(events.presence.map((p) => `${p.user}:${p.status}`), ['carol:online', 'dave:offline', 'carol:offline']);
    assert.equal(c.presence('erin'), undefined);
  });
});

test('a presence subscription is the connection\u2019s: the client asks again after a reconnect', async () => {
  const { c, server, reconnect } = await online();
  const asking = c.subscribePresence(['carol']);
  await tick();
  server().push({ type: 'PRESENCE_STATE', ref: server().last('PRESENCE_SUBSCRIBE').ref, users: [{ user: 'carol', status: 'online', last_seen: null }] });
  await asking;
  server().drop();
  await tick(30);
  await reconnect();
  assert.deepEqual(server().last('PRESENCE_SUBSCRIBE')?.users, ['carol']);
});
