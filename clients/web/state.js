// The page's model: the signed-in user, the conversations (their messages from the mailbox, synced from 0
// on each sign-in and each reload) and what the server says of them: the SDK's conversation list
// (CONVERSATIONS, kept current from the entries and READ_STATE) gives each its unread count and read mark,
// the same on every device of the user; receipts and DELIVERED give "seen" and "delivered" on one's own
// messages; typing and presence come from the SDK as they change (decision 79).
import {
  eventPreview,
  isGroupConversation,
  isGroupSystemEntry,
  isMessageEventEntry,
  isMuted,
  parseAttachmentsBody,
  parseGroupEvent,
  parseMessageEvent,
  peerOf,
  unreadLabel,
} from './sdk/index.js';

export const state = {
  me: null,
  client: null,
  open: null, // the conversation shown
  online: false,
  wasOnline: false, // online once in this session: 'offline' is an outage, not the first connect
  synced: false, // the first SYNC of the session is done (the list is complete)
  blocked: new Set(), // the users I block (BLOCKS at sign-in, then the SDK's block events)
  editing: null, // { c, m }: the message the composer edits, or null
  replying: null, // { c, m }: the message the composer's next SEND replies to, or null
};

// id -> { id, peer, group, messages: Map(key -> msg), summary, readAsked, readThrough, deliveredThrough,
// history, loadingOlder }. summary: the SDK's row (unread, read_seq, last, peer marks) or null before the
// server's list came. readThrough / deliveredThrough: the highest message id of this conversation read by
// another member / held by the peer's mailbox (decimal strings, null: none known).
// history: 'unknown' (not asked), 'loading', 'more' (older messages exist), 'all', 'error'.
export const conversations = new Map();

export function conversation(id) {
  let c = conversations.get(id);
  if (!c) {
    c = {
      id,
      peer: peerOf(id, state.me) ?? id,
      messages: new Map(),
      summary: null,
      readAsked: 0n,
      readThrough: null,
      deliveredThrough: null,
      history: 'unknown',
      loadingOlder: false,
    };
    // A group: its name (until known, its id), my role, its members (null until read), whether I am out.
    if (isGroupConversation(id)) c.group = { name: null, role: null, members: null, left: false };
    conversations.set(id, c);
  }
  return c;
}

export function reset() {
  conversations.clear();
  Object.assign(state, { me: null, client: null, open: null, online: false, wasOnline: false, synced: false, editing: null, replying: null });
  state.blocked = new Set();
}

function big(s) {
  return typeof s === 'string' && /^[0-9]+$/.test(s) ? BigInt(s) : 0n;
}

function higher(a, b) {
  if (b === null || b === undefined) return a;
  return a === null || big(b) > big(a) ? b : a;
}

/** The server's list changed (the SDK's `conversations` event): each row onto its conversation. */
export function applyList(rows) {
  for (const r of rows) {
    const c = conversation(r.conversation);
    c.summary = r;
    if (c.group && r.name && !c.group.name) c.group.name = r.name;
    c.readThrough = higher(c.readThrough, r.peer_read_through);
    c.deliveredThrough = higher(c.deliveredThrough, r.peer_delivered_through);
  }
}

/** A RECEIPT: another member read up to a message (in a direct conversation, the peer). */
export function applyReceipt(r) {
  if (r.user === state.me) return;
  const c = conversation(r.conversation);
  c.readThrough = higher(c.readThrough, r.read_through);
}

/** DELIVERED: the peer's mailbox holds a message of mine. */
export function applyDelivered(d) {
  const c = conversation(d.conversation);
  c.deliveredThrough = higher(c.deliveredThrough, d.message_id);
}

/**
 * The conversation is open and visible: READ up to the highest mailbox seq held, when the server counts
 * something unread there (or has not said yet). One READ per new mark; a failed one is asked again later.
 */
export function markRead(c) {
  let top = 0n;
  for (const m of c.messages.values()) if (m.seq && BigInt(m.seq) > top) top = BigInt(m.seq);
  if (top === 0n || top <= c.readAsked) return;
  const s = c.summary;
  if (s && (big(s.read_seq) >= top || (s.unread === 0 && !s.unread_capped))) return;
  c.readAsked = top;
  state.client?.markRead(c.id, top.toString()).catch((e) => {
    console.warn('qim: read:', e);
    if (c.readAsked === top) c.readAsked = 0n;
  });
}

/** The server's count of unread messages, as shown in the badge ('' for none, '999+' when capped). */
export function unreadOf(c) {
  return c.summary ? unreadLabel(c.summary) : '';
}

/** Whether a conversation is muted now (the server's row, or the last MUTE_OK / MUTE_CHANGED seen). */
export function mutedOf(c) {
  return isMuted(c.mute ?? c.summary ?? {});
}

/** The tab title's total over the list: a muted conversation is no badge (its own count stays on its row). */
export function totalUnread() {
  let n = 0;
  let capped = false;
  for (const c of conversations.values()) {
    if (mutedOf(c)) continue;
    n += c.summary?.unread ?? 0;
    capped ||= Boolean(c.summary?.unread_capped);
  }
  return n > 0 ? `${n}${capped ? '+' : ''}` : '';
}

/**
 * What one's own message shows: its local state while on its way (sending, failed), else `seen` when
 * another member read it, `delivered` when the peer's mailbox holds it (DELIVERED, never one's own copy),
 * else `sent` (the SEND_ACK: durable in the Outbox). Message ids rise within a conversation.
 */
export function deliveryOf(c, m) {
  if (m.state === 'sending' || m.state === 'failed') return m.state;
  // Not acknowledged yet (no id). Note: "0" is an id (partition 0, offset 0), not a placeholder.
  if (typeof m.message_id !== 'string' || !/^[0-9]+$/.test(m.message_id)) return m.state ?? 'sent';
  const id = BigInt(m.message_id);
  if (c.readThrough !== null && id <= big(c.readThrough)) return 'seen';
  if (c.deliveredThrough !== null && id <= big(c.deliveredThrough)) return 'delivered';
  return 'sent';
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
  let t = c.summary?.last?.server_time ?? 0;
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

/** What a message says: a system entry's text (its JSON body parsed), a recalled one's placeholder, else the body. */
export function textOf(m) {
  if (m.recalled) return 'message recalled';
  if (isGroupSystemEntry(m)) return parseGroupEvent(m).text;
  const files = parseAttachmentsBody(m.body);
  if (files) return files.text || files.attachments.map((a) => `📎 ${a.name}`).join(', ');
  return m.body;
}

/** The message of a conversation with this id, or undefined. */
export function byId(c, messageId) {
  for (const m of c.messages.values()) if (m.message_id === messageId) return m;
  return undefined;
}

/**
 * A message's new state (the SDK's fold: an edit, a recall, its reactions, live or replayed by SYNC) onto
 * the page's copy.
 */
export function applyState(s) {
  const c = conversation(s.conversation);
  const m = byId(c, s.message_id);
  if (!m) return false;
  Object.assign(m, { body: s.body, edited_at: s.edited_at, edit_count: s.edit_count, recalled: s.recalled, reactions: s.reactions });
  return true;
}

const QUOTE_CHARS = 100;

/**
 * What a reply shows of the message it replies to: the message as this page holds it now (edited or
 * recalled since), else the server's `quote` (decision 125). Null when there is nothing to show.
 * { sender, text, recalled }.
 */
export function quoteOf(c, m) {
  if (typeof m.reply_to !== 'string') return null;
  const held = byId(c, m.reply_to);
  if (held) {
    const chars = [...textOf(held)];
    const text = chars.length > QUOTE_CHARS ? `${chars.slice(0, QUOTE_CHARS).join('')}…` : chars.join('');
    return { sender: held.sender, text, recalled: held.recalled === true };
  }
  const q = m.quote;
  if (!q) return { sender: null, text: 'an earlier message', recalled: false };
  if (q.recalled) return { sender: null, text: 'message recalled', recalled: true };
  return { sender: q.sender ?? null, text: `${q.body ?? ''}${q.truncated ? '…' : ''}`, recalled: false };
}

/** Messages deleted for me (here or on another device): one, or every one up to `through`. */
export function applyDeleted(d) {
  const c = conversation(d.conversation);
  for (const [key, m] of c.messages) {
    if (typeof m.message_id !== 'string') continue;
    if (d.message_id !== undefined ? m.message_id === d.message_id : big(m.message_id) <= big(d.through)) c.messages.delete(key);
  }
}

/**
 * A list row's `last` from the server carries no client_msg_id (only seq, ids, sender, time and a
 * preview of the body): a group's system entry is known by its JSON body. Its text, or null.
 */
export function systemPreview(m) {
  if (isMessageEventEntry(m)) {
    const ev = parseMessageEvent(m);
    return ev ? eventPreview(ev) : '';
  }
  if (isGroupSystemEntry(m)) return parseGroupEvent(m).text;
  if (m.client_msg_id !== undefined || !isGroupConversation(m.conversation)) return null;
  try {
    const o = JSON.parse(m.body);
    return o && typeof o.group_op === 'string' ? (typeof o.text === 'string' ? o.text : '') : null;
  } catch {
    return null;
  }
}
