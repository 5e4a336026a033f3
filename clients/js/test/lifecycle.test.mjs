// The message-state fold (src/lifecycle.ts), without a server: edit after edit, recall after edit, events
// before their message, duplicates, kinds the SDK does not know, HISTORY's state as the base.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageStates, countsAsUnread, eventPreview, foldMessage, isMessageEventEntry, parseMessageEvent } from '../dist/index.js';

const conv = 'd:alice:bob';
const msg = { seq: '10', message_id: '100', conversation: conv, sender: 'alice', sender_device: 'p', client_msg_id: 'c1', server_time: 1000, body: 'helo' };
let nextId = 200;
function edit(body, count, id = String(nextId++)) {
  return {
    seq: id, message_id: id, conversation: conv, sender: 'alice', sender_device: 'p', client_msg_id: '~edit', server_time: 2000 + count,
    body: JSON.stringify({ event: 'edit', message_id: '100', body, edited_at: 2000 + count, edit_count: count }),
  };
}
function recall(by = 'alice', id = String(nextId++)) {
  return {
    seq: id, message_id: id, conversation: conv, sender: by, sender_device: 'p', client_msg_id: '~recall', server_time: 3000,
    body: JSON.stringify({ event: 'recall', message_id: '100', by }),
  };
}

test('edit after edit: the last edit gives the body, its time and the count', () => {
  const s = foldMessage(msg, [edit('hello', 1), edit('hello, world', 2)]);
  assert.equal(s.body, 'hello, world');
  assert.equal(s.edit_count, 2);
  assert.equal(s.edited_at, 2002);
  assert.equal(s.recalled, false);
  // Out of order (a page and a push crossing): still the highest count.
  assert.equal(foldMessage(msg, [edit('hello, world', 2), edit('hello', 1)]).body, 'hello, world');
  // Untouched message: as sent.
  const plain = foldMessage(msg, []);
  assert.deepEqual([plain.body, plain.edit_count, plain.edited_at, plain.recalled], ['helo', 0, null, false]);
});

test('recall after edit (and an edit racing after a recall): recalled, the body gone', () => {
  const s = foldMessage(msg, [edit('hello', 1), recall('alice')]);
  assert.equal(s.recalled, true);
  assert.equal(s.body, '');
  assert.equal(s.recalled_by, 'alice');
  const late = foldMessage(msg, [recall('alice'), edit('again', 2)]);
  assert.equal(late.recalled, true);
  assert.equal(late.body, '');
});

test('events about another message and unknown kinds are ignored, never thrown', () => {
  const other = { ...edit('x', 1), body: JSON.stringify({ event: 'edit', message_id: '999', body: 'x', edited_at: 1, edit_count: 1 }) };
  // A kind this SDK does not know (reactions are known since decision 145: test/reactions.test.mjs).
  const react = { ...edit('x', 1), client_msg_id: '~pin', body: JSON.stringify({ event: 'pin', message_id: '100' }) };
  const junk = { ...edit('x', 1), body: 'not json' };
  assert.equal(parseMessageEvent(react), null);
  assert.equal(parseMessageEvent(junk), null);
  assert.equal(parseMessageEvent(msg), null); // a message is not an event
  assert.equal(isMessageEventEntry(react), false);
  assert.equal(isMessageEventEntry(edit('y', 1)), true);
  // A list row's `last` has no client_msg_id: known by its body.
  const { client_msg_id: _, ...preview } = recall();
  assert.equal(isMessageEventEntry(preview), true);
  assert.equal(eventPreview(parseMessageEvent(preview)), 'message recalled');
  assert.equal(eventPreview(parseMessageEvent(edit('new', 1))), 'edited: new');
  const s = foldMessage(msg, [other, react, junk]);
  assert.equal(s.body, 'helo');
  assert.equal(s.edit_count, 0);
  // Event entries are system entries: never unread.
  assert.equal(countsAsUnread(edit('z', 1), 'bob'), false);
});

test('MessageStates: an event before its message waits for it; duplicates change nothing', () => {
  const states = new MessageStates();
  const e1 = edit('hello', 1);
  assert.equal(states.applyEvent(e1), null); // no message yet
  assert.equal(states.get('100'), undefined);
  const first = states.applyMessage(msg);
  assert.equal(first.body, 'hello');
  assert.equal(first.edit_count, 1);
  assert.equal(states.applyEvent(e1), null); // the same event again
  const e2 = edit('hello!', 2);
  assert.equal(states.applyEvent(e2).body, 'hello!');
  assert.equal(states.applyEvent(e2), null);
  assert.equal(states.applyMessage(msg), null); // the message again: same state
  const r = states.applyEvent(recall('alice'));
  assert.equal(r.recalled, true);
  assert.equal(states.get('100').body, '');
});

test("MessageStates: HISTORY's current state is the base; older events do not roll it back", () => {
  const states = new MessageStates();
  const fromHistory = { ...msg, body: 'third', edited_at: 2003, edit_count: 3 };
  assert.equal(states.applyMessage(fromHistory).body, 'third');
  assert.equal(states.applyEvent(edit('first', 1)), null);
  assert.equal(states.get('100').body, 'third');
  assert.equal(states.applyEvent(edit('fourth', 4)).body, 'fourth');
  // The mailbox's original entry afterwards (as sent) does not replace a base that knows more.
  assert.equal(states.applyMessage(msg), null);
  assert.equal(states.get('100').body, 'fourth');
  // HISTORY's tombstone.
  const gone = new MessageStates();
  const t = gone.applyMessage({ ...msg, body: '', recalled: true });
  assert.equal(t.recalled, true);
  assert.equal(gone.applyEvent(edit('zombie', 9)).body, '');
});

test('lastPreview: a list row whose latest entry is an event, a group system entry or a message', async () => {
  const { lastPreview } = await import('../dist/index.js');
  const { client_msg_id: _a, ...editRow } = edit('hello there', 1);
  assert.equal(lastPreview({ last: editRow }), 'edited: hello there');
  const { client_msg_id: _b, ...recallRow } = recall();
  assert.equal(lastPreview({ last: recallRow }), 'message recalled');
  const g = { seq: '1', message_id: '1', conversation: 'g:00ff', sender: 'bob', server_time: 1, body: JSON.stringify({ group_op: 'add', text: 'bob added carol' }) };
  assert.equal(lastPreview({ last: g }), 'bob added carol');
  assert.equal(lastPreview({ last: { ...msg, body: '{"event":"pin","message_id":"100"}' } }), '{"event":"pin","message_id":"100"}');
  assert.equal(lastPreview({ last: msg }), 'helo');
  assert.equal(lastPreview({ last: null }), '');
});

// An edit changes the text, never the files (decision 152): the fold keeps a message's attachments whatever
// the edit's body is (the server's composed attachments body, or plain text), and the preview shows the text.
test('an edit of a message with attachments keeps them and changes the caption', async () => {
  const { editedBody, captionOf, parseAttachmentsBody } = await import('../dist/index.js');
  const files = [{ attachment: 'a1.r.m', kind: 'image', name: 'cat.png', content_type: 'image/png', size: 5, width: 1, height: 1, thumbnail: true }];
  const withFiles = { ...msg, body: JSON.stringify({ qim: 'attachments', text: 'old caption', attachments: files }) };
  const composed = JSON.stringify({ qim: 'attachments', text: 'new caption', attachments: files });
  for (const body of ['new caption', composed]) {
    const s = foldMessage(withFiles, [edit(body, 1)]);
    const shown = parseAttachmentsBody(s.body);
    assert.ok(shown, `the edited body (${body}) still carries the attachments`);
    assert.equal(shown.text, 'new caption');
    assert.deepEqual(shown.attachments, files);
    assert.equal(s.edit_count, 1);
  }
  // Two edits, and HISTORY's already-edited state as the base: still the files, the last text.
  const twice = foldMessage(withFiles, [edit('first', 1), edit('second', 2)]);
  assert.equal(parseAttachmentsBody(twice.body).text, 'second');
  assert.deepEqual(parseAttachmentsBody(twice.body).attachments, files);
  const states = new MessageStates();
  states.applyMessage({ ...withFiles, seq: undefined, body: composed, edit_count: 1 });
  const later = states.applyEvent(edit('third', 2));
  assert.equal(parseAttachmentsBody(later.body).text, 'third');
  assert.deepEqual(parseAttachmentsBody(later.body).attachments, files);
  // A recall still wins, files and all.
  assert.equal(foldMessage(withFiles, [edit('x', 1), recall()]).body, '');
  // The preview shows the text, not the body's JSON.
  assert.equal(eventPreview(parseMessageEvent(edit(composed, 1))), 'edited: new caption');
  // A text message's edit is its body; the caption of a text body is itself.
  assert.equal(foldMessage(msg, [edit('hello', 1)]).body, 'hello');
  assert.equal(editedBody('helo', 'hello'), 'hello');
  assert.equal(captionOf(composed), 'new caption');
  assert.equal(captionOf('plain'), 'plain');
});
