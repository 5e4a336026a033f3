// The page's model: the signed-in user, the conversations (built from the mailbox, synced from 0 on each
// sign-in and each reload) and what was read. What was read is the highest mailbox seq seen in a
// conversation while it was shown, kept in localStorage per user and conversation; the unread count is
// derived from it (messages of others above it), never counted up, so it is the same after a reload and
// follows what another tab of the same browser reads (the `storage` event).
import { isGroupConversation, isGroupSystemEntry, parseGroupEvent, peerOf } from './sdk/index.js';

export const state = {
  me: null,
  client: null,
  open: null, // the conversation shown
  online: false,
  wasOnline: false, // online once in this session: 'offline' is an outage, not the first connect
  synced: false, // the first SYNC of the session is done (the list is complete)
};

// id -> { id, peer, group, messages: Map(key -> msg), readSeq, history, loadingOlder }
// history: 'unknown' (not asked), 'loading', 'more' (older messages exist), 'all', 'error'.
export const conversations = new Map();

function readKey(id) {
  return `qim.read.${state.me}.${id}`;
}

export function conversation(id) {
  let c = conversations.get(id);
  if (!c) {
    c = { id, peer: peerOf(id, state.me) ?? id, messages: new Map(), history: 'unknown', loadingOlder: false };
    // A group: its name (until known, its id), my role, its members (null until read), whether I am out.
    if (isGroupConversation(id)) c.group = { name: null, role: null, members: null, left: false };
    c.readSeq = BigInt(localStorage.getItem(readKey(id)) ?? '0');
    conversations.set(id, c);
  }
  return c;
}

export function reset() {
  conversations.clear();
  Object.assign(state, { me: null, client: null, open: null, online: false, wasOnline: false, synced: false });
}

export function markRead(c) {
  let top = c.readSeq;
  for (const m of c.messages.values()) if (m.seq && BigInt(m.seq) > top) top = BigInt(m.seq);
  if (top === c.readSeq && localStorage.getItem(readKey(c.id)) !== null) return;
  c.readSeq = top;
  localStorage.setItem(readKey(c.id), top.toString());
}

/** Another tab of this browser read further (a localStorage change): true if it changed a count. */
export function readElsewhere(key, value) {
  const prefix = `qim.read.${state.me}.`;
  if (!state.me || !key?.startsWith(prefix) || value === null) return false;
  const c = conversations.get(key.slice(prefix.length));
  if (!c || !/^[0-9]+$/.test(value) || BigInt(value) <= c.readSeq) return false;
  c.readSeq = BigInt(value);
  return true;
}

/** Messages of others above what was read; system entries are shown, not counted. */
export function unreadOf(c) {
  let n = 0;
  for (const m of c.messages.values()) {
    if (m.seq && m.sender !== state.me && !isGroupSystemEntry(m) && BigInt(m.seq) > c.readSeq) n++;
  }
  return n;
}

export function totalUnread() {
  let n = 0;
  for (const c of conversations.values()) n += unreadOf(c);
  return n;
}

export function title(c) {
  return c.group ? (c.group.name ?? 'Group') : c.peer;
}

// One message into its conversation; own messages are matched by client_msg_id (the send's local copy).
// System entries by message id: all of one op's kind share their client_msg_id (`~group:<op>`).
export function upsert(c, m) {
  const own = m.sender === state.me && !isGroupSystemEntry(m);
  const key = own ? `c:${m.client_msg_id}` : `m:${m.message_id}`;
  const had = c.messages.get(key);
  c.messages.set(key, { ...had, ...m, state: m.state ?? had?.state, seq: m.seq ?? had?.seq });
  return !had;
}

export function order(a, b) {
  return (a.server_time ?? Number.MAX_SAFE_INTEGER) - (b.server_time ?? Number.MAX_SAFE_INTEGER);
}

export function sorted(c) {
  return [...c.messages.values()].sort(order);
}

export function lastTime(c) {
  let t = 0;
  for (const m of c.messages.values()) t = Math.max(t, m.server_time ?? Date.now());
  return t;
}

/** The oldest message id held for the conversation: HISTORY pages back from it (exclusive). */
export function oldestId(c) {
  let oldest = null;
  for (const m of c.messages.values()) {
    if (!m.message_id || m.message_id === '0') continue;
    const id = BigInt(m.message_id);
    if (oldest === null || id < oldest) oldest = id;
  }
  return oldest === null ? undefined : oldest.toString();
}

/** What a message says: a system entry's text (its JSON body parsed), else the body. */
export function textOf(m) {
  return isGroupSystemEntry(m) ? parseGroupEvent(m).text : m.body;
}
