// Groups through the SDK against a real `qim up`: create, add, members receive, a removed member receives
// nothing after its removal, refusals are typed errors, system entries arrive as parsed `group` events,
// history of a `g:` conversation pages back. And the parsing of system entries on its own (no server).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { QimClient, QimError, isGroupConversation, isGroupSystemEntry, parseGroupEvent } from '../dist/index.js';
import { Qim, user, waitFor } from './qim.mjs';

// Every client made, closed after each test even when it fails (an open one reconnects forever and keeps
// the test process alive).
const made = [];
afterEach(() => {
  for (const c of made.splice(0)) c.close();
});

function client(qim, name) {
  return remember(new QimClient({
    url: qim.url,
    token: () => qim.token(name),
    createSocket: qim.socketFactory(),
    reconnectInitialMs: 50,
    reconnectMaxMs: 500,
  }));
}

function remember(c) {
  made.push(c);
  return c;
}

// The `message` and `group` events of a client, in the order they came.
function record(c) {
  const r = { messages: [], events: [] };
  c.on('message', (e) => r.messages.push(e));
  c.on('group', (g) => r.events.push(g));
  return r;
}

async function refused(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof QimError, `expected a QimError, got ${e}`);
    assert.equal(e.code, code);
    return true;
  });
}

describe('system entries (no server)', () => {
  const entry = (body, client_msg_id = '~group:add') => ({
    seq: '7',
    message_id: '281474976710777',
    conversation: 'g:3f9c0b6e1d2a4c8f',
    sender: 'bob',
    sender_device: 'web',
    client_msg_id,
    server_time: 1,
    body,
  });

  test('a JSON body is parsed into a typed event', () => {
    const e = parseGroupEvent(entry('{"group_op":"add","by":"bob","members":["carol","dave"],"text":"bob added carol, dave"}'));
    assert.equal(e.op, 'add');
    assert.equal(e.by, 'bob');
    assert.deepEqual(e.members, ['carol', 'dave']);
    assert.equal(e.text, 'bob added carol, dave');
    assert.equal(e.group, 'g:3f9c0b6e1d2a4c8f');
    const r = parseGroupEvent(entry('{"group_op":"rename","by":"bob","name":"core","text":"bob renamed the group"}'));
    assert.equal(r.op, 'rename');
    assert.equal(r.name, 'core');
  });

  test('a body that is not the expected JSON is shown as text, never thrown', () => {
    for (const body of ['not json {', '[1,2]', '"a string"', 'null', '{"group_op":"explode","text":"x"}', '{"text":"t"}']) {
      const e = parseGroupEvent(entry(body));
      assert.equal(e.op, null, body);
      assert.equal(e.text, body);
      assert.equal(e.by, 'bob');
      assert.deepEqual(e.members, []);
    }
  });

  test('system entries are told apart from messages by conversation and client_msg_id', () => {
    assert.equal(isGroupSystemEntry(entry('{}')), true);
    assert.equal(isGroupSystemEntry(entry('hi', 'c-1')), false);
    assert.equal(isGroupSystemEntry({ conversation: 'd:a:b', client_msg_id: '~group:add' }), false);
    assert.equal(isGroupConversation('g:3f9c'), true);
    assert.equal(isGroupConversation('d:a:b'), false);
  });
});

describe('groups against qim up', () => {
  let qim;
  before(async () => {
    qim = await new Qim().start();
  });
  after(async () => {
    await qim?.destroy();
  });

  test('create, add, members receive; a removed member receives nothing after its removal', async () => {
    const a = user('alice'), b = user('bob'), c = user('carol'), d = user('dave');
    const alice = client(qim, a), bob = client(qim, b), carol = client(qim, c), dave = client(qim, d);
    const bobs = record(bob), carols = record(carol), daves = record(dave);
    await Promise.all([alice.start(), bob.start(), carol.start(), dave.start()]);

    const created = await alice.createGroup('team', [b]);
    assert.equal(created.type, 'GROUP_OK');
    assert.equal(created.op, 'create');
    const g = created.group;
    assert.ok(isGroupConversation(g), g);
    await waitFor('bob sees the create', () => bobs.events.some((e) => e.op === 'create'));
    const create = bobs.events.find((e) => e.op === 'create');
    assert.equal(create.group, g);
    assert.equal(create.by, a);
    assert.equal(create.entry.message_id, created.message_id);

    const added = await alice.addMembers(g, [c]);
    assert.equal(added.op, 'add');
    await waitFor('carol sees her add', () => carols.events.some((e) => e.op === 'add'));
    assert.deepEqual(carols.events.find((e) => e.op === 'add').members, [c]);

    assert.deepEqual(
      (await bob.members(g)).members.map((m) => [m.user, m.role]).sort(),
      [[a, 'owner'], [b, 'member'], [c, 'member']].sort(),
    );
    const bobGroups = await bob.groups();
    assert.deepEqual(bobGroups.map((x) => [x.group, x.name, x.role, x.members]), [[g, 'team', 'member', 3]]);

    const hi = await alice.send({ conversation: g, body: 'hello team' });
    assert.equal(hi.conversation, g);
    for (const [who, r] of [['bob', bobs], ['carol', carols]])
      await waitFor(`${who} gets the group message`, () => r.messages.some((m) => m.message_id === hi.message_id));
    assert.equal(carols.messages.find((m) => m.message_id === hi.message_id).sender, a);

    await alice.removeMembers(g, [c]);
    await waitFor('carol sees her removal', () => carols.events.some((e) => e.op === 'remove'));
    const afterRemoval = carols.messages.length;
    const secret = await alice.send({ conversation: g, body: 'after carol left' });
    await waitFor('bob gets it', () => bobs.messages.some((m) => m.message_id === secret.message_id));
    // Carol back in, by an op later in the group's order than the message: once her add is in her
    // mailbox, the message would be there before it had she received it.
    await alice.addMembers(g, [c]);
    await waitFor('carol sees her second add', () => carols.events.filter((e) => e.op === 'add').length === 2);
    const between = carols.messages.slice(afterRemoval);
    assert.deepEqual(between.map((m) => m.client_msg_id), ['~group:add']);
    // Her history starts where she last joined: not the message said while she was out.
    const seen = (await carol.history(g)).messages.map((m) => m.message_id);
    assert.ok(!seen.includes(secret.message_id), 'carol reads what was said while she was removed');

    // Dave never was a member: nothing reaches him and his frames are refused with the typed error.
    await refused(dave.send({ conversation: g, body: 'let me in' }), 'NOT_A_MEMBER');
    await refused(dave.history(g), 'NOT_A_MEMBER');
    await refused(dave.members(g), 'NOT_A_MEMBER');
    assert.deepEqual(await dave.groups(), []);
    assert.equal(daves.messages.length, 0);
    for (const x of [alice, bob, carol, dave]) x.close();
  });

  test('roles and unknown groups are refused with typed errors, nothing changes', async () => {
    const a = user('alice'), b = user('bob'), c = user('carol');
    const alice = client(qim, a), bob = client(qim, b);
    await Promise.all([alice.start(), bob.start()]);
    const { group: g } = await alice.createGroup('roles', [b]);
    await refused(bob.addMembers(g, [c]), 'NOT_ALLOWED');
    await refused(alice.leaveGroup(g), 'NOT_ALLOWED');
    await refused(alice.setRole(g, b, 'owner'), 'INVALID_ARGUMENT');
    await refused(alice.members('g:00000000000000ff'), 'UNKNOWN_GROUP');
    assert.deepEqual((await alice.members(g)).members.map((m) => m.user).sort(), [a, b].sort());
    // An admin may add; the member then leaves by itself.
    await alice.setRole(g, b, 'admin');
    await bob.addMembers(g, [c]);
    const renamed = await bob.renameGroup(g, 'renamed');
    assert.equal(renamed.op, 'rename');
    const list = await alice.members(g);
    assert.equal(list.name, 'renamed');
    assert.deepEqual(list.members.map((m) => [m.user, m.role]).sort(), [[a, 'owner'], [b, 'admin'], [c, 'member']].sort());
    await bob.leaveGroup(g);
    assert.deepEqual((await alice.members(g)).members.map((m) => m.user).sort(), [a, c].sort());
    await refused(bob.members(g), 'NOT_A_MEMBER');
    alice.close();
    bob.close();
  });

  test('a group history pages back, newest first', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a);
    await alice.start();
    const { group: g } = await alice.createGroup('paging', [b]);
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push((await alice.send({ conversation: g, body: `m${i}` })).message_id);
    const bodies = [];
    let before;
    for (let pages = 0; pages < 10; pages++) {
      const page = await alice.history(g, { before, limit: 2 });
      assert.ok(page.messages.length <= 2);
      bodies.push(...page.messages.filter((m) => !isGroupSystemEntry(m)).map((m) => m.body));
      if (!page.more || page.messages.length === 0) break;
      before = page.messages[page.messages.length - 1].message_id;
    }
    assert.deepEqual(bodies, ['m4', 'm3', 'm2', 'm1', 'm0']);
    alice.close();
  });
});
