// The inbox (docs/protocol.md "Inbox"): read marks, unread counts, the conversation list, delivery and
// read receipts, settings. The frames as the server sends them, and ConversationList: the list the
// client keeps current from a first CONVERSATIONS page, the entries of the mailbox and the read-state
// pushes, so an app renders one `conversations` event instead of merging frames itself (decision 79).
import type { Entry } from './frames.js';
import { isGroupConversation } from './groups.js';
import { eventPreview, isMessageEventEntry, parseMessageEvent } from './lifecycle.js';
import { isMuted } from './privacy.js';

/** Where counts stop: with `unread_capped` a client shows `999+` (the server's kUnreadCap). */
export const UNREAD_CAP = 999;

/** READ's answer: the mark after the call (never lower than before) and the conversation's unread count. */
export interface ReadOk {
  type: 'READ_OK';
  ref?: string;
  conversation: string;
  read_seq: string;
  unread: number;
  unread_capped: boolean;
}

/** Pushed to the user's other connections when one of them moved a read mark. */
export interface ReadState {
  type: 'READ_STATE';
  conversation: string;
  read_seq: string;
  unread: number;
  unread_capped: boolean;
}

/** Pushed to the other members when a member (with receipts on) read up to a message. */
export interface Receipt {
  type: 'RECEIPT';
  conversation: string;
  user: string;
  /** The message id of the last entry of the conversation the reader has read. */
  read_through: string;
}

/** Pushed to the sender of a direct message once the peer's mailbox holds it (its shard's frontier covers it). */
export interface Delivered {
  type: 'DELIVERED';
  conversation: string;
  /** The peer whose mailbox holds it. */
  user: string;
  message_id: string;
}

/**
 * A row's latest entry. From the server: seq, message_id, conversation, sender, server_time and `body`, the
 * body's first 200 bytes (a preview; a group's system entry is its JSON, possibly cut); client_msg_id and
 * sender_device may be absent. Once the client saw a newer entry of the conversation: that entry, whole.
 */
export type LastEntry = Omit<Entry, 'client_msg_id' | 'sender_device'> & Partial<Pick<Entry, 'client_msg_id' | 'sender_device'>>;

/** One row of the conversation list. */
export interface ConversationSummary {
  conversation: string;
  kind: 'direct' | 'group';
  /** A direct conversation's other member. */
  peer?: string;
  /** A group's name (null when the group store has none any more). */
  name?: string | null;
  /** The latest visible entry; null only for a row the SDK made before the server's. */
  last: LastEntry | null;
  read_seq: string;
  unread: number;
  unread_capped: boolean;
  /** Direct conversations: the highest message id the peer has read (null: none, or the peer's receipts are off). */
  peer_read_through: string | null;
  /** Direct conversations: the highest message id of the conversation the peer's mailbox holds. */
  peer_delivered_through: string | null;
  /** Muted (no badge: not in `unreadConversations`, its own `unread` still counted); see isMuted(). */
  muted?: boolean;
  /** When the mute ends (ms); null: for ever, or not muted. */
  muted_until?: number | null;
}

export interface ConversationsPage {
  type: 'CONVERSATIONS_PAGE';
  ref?: string;
  /** Newest activity first. */
  conversations: ConversationSummary[];
  /** Pass as `before` for the next page; null: this was the last. */
  next_before: string | null;
  /** Conversations with unread > 0 in the whole list (not only this page). */
  unread_conversations: number;
}

export interface ReceiptsPage {
  type: 'RECEIPTS_PAGE';
  ref?: string;
  conversation: string;
  message_id: string;
  /** How many members (other than the sender) have read the message. */
  read_count: number;
  /** Who, for a conversation of at most the server's QIM_RECEIPT_READERS_MAX members; else null. */
  readers: string[] | null;
}

export type ReceiptsSetting = 'on' | 'off';
export type PresenceSetting = 'everyone' | 'contacts' | 'nobody';

export interface Settings {
  /** off: the user's reads still sync to their own devices, but nobody gets their receipts. */
  receipts: ReceiptsSetting;
  /** Who sees the user online: everyone, contacts (the users they share a direct conversation with), nobody. */
  presence: PresenceSetting;
}

export interface SettingsOk {
  type: 'SETTINGS_OK';
  ref?: string;
  settings: Settings;
}

export type InboxServerFrame = ReadOk | ReadState | Receipt | Delivered | ConversationsPage | ReceiptsPage | SettingsOk;

export type InboxClientFrame =
  | { type: 'READ'; ref: string; conversation: string; seq: string }
  | { type: 'CONVERSATIONS'; ref: string; before?: string; limit?: number }
  | { type: 'RECEIPTS'; ref: string; conversation: string; message_id: string }
  | { type: 'SETTINGS'; ref: string; receipts?: ReceiptsSetting; presence?: PresenceSetting };

export const INBOX_SERVER_TYPES = [
  'READ_OK',
  'READ_STATE',
  'RECEIPT',
  'DELIVERED',
  'CONVERSATIONS_PAGE',
  'RECEIPTS_PAGE',
  'SETTINGS_OK',
] as const;

/**
 * Whether an entry counts as unread for `me` (the server's rule, src/inbox/unread_rule.h): it was not sent
 * by me and is not a system entry (a client_msg_id starting with `~`: a group's membership ops).
 */
export function countsAsUnread(entry: Pick<Entry, 'sender' | 'client_msg_id'>, me: string): boolean {
  return entry.sender !== me && !(typeof entry.client_msg_id === 'string' && entry.client_msg_id.startsWith('~'));
}

/** The count as people read it: `3`, `999+`, or '' for none. */
export function unreadLabel(s: Pick<ConversationSummary, 'unread' | 'unread_capped'>): string {
  if (s.unread_capped) return `${UNREAD_CAP}+`;
  return s.unread > 0 ? String(s.unread) : '';
}

/**
 * What a row shows of its latest entry: "edited: <body>" or "message recalled" for an edit or recall event
 * (the message-state fold's event entries), a group's system entry's text, else the body ('' for none). A
 * row's `last` from the server has no client_msg_id: events and system entries are known by their JSON.
 */
export function lastPreview(row: Pick<ConversationSummary, 'last'>): string {
  const last = row.last;
  if (!last) return '';
  if (isMessageEventEntry(last)) {
    const ev = parseMessageEvent(last);
    return ev ? eventPreview(ev) : '';
  }
  const system = typeof last.client_msg_id === 'string' ? last.client_msg_id.startsWith('~group:') : isGroupConversation(last.conversation);
  if (system) {
    try {
      const o = JSON.parse(last.body) as { group_op?: unknown; text?: unknown };
      if (o && typeof o.group_op === 'string') return typeof o.text === 'string' ? o.text : '';
    } catch {
      // not a system entry's JSON: a message
    }
  }
  return last.body;
}

function big(s: string | null | undefined): bigint {
  return s && /^[0-9]+$/.test(s) ? BigInt(s) : 0n;
}

function maxId(a: string | null, b: string): string {
  return a !== null && big(a) >= big(b) ? a : b;
}

/**
 * What the client knows of the user's conversations, kept current. Rules (decision 79):
 *  - a CONVERSATIONS page replaces the rows it holds (the server's counts are exact at its frontier);
 *  - an entry of the mailbox counts only if its seq is above the row's `last.seq` (what the server
 *    counted ends there) and above `read_seq`, and only per `countsAsUnread`; it becomes the row's `last`;
 *  - READ_OK / READ_STATE set `read_seq` (never lower) and the count; RECEIPT from the peer raises
 *    `peer_read_through`, DELIVERED raises `peer_delivered_through`;
 *  - a capped count stays capped until the server says otherwise.
 * The owner (QimClient) refetches the first page when a count could be off: a READ_STATE with unread > 0
 * (entries the server counted may not have reached this client yet), an entry of a conversation it has no
 * row for, and after every reconnect (pushes sent while offline are lost).
 */
export class ConversationList {
  private readonly rows = new Map<string, ConversationSummary>();
  /** Where the next older page starts (`before`); null: every row is held. */
  nextBefore: string | null = null;
  /** Whether a first page was applied (before it the list is not tracked: nothing is counted). */
  started = false;

  constructor(private readonly me: () => string | null) {}

  /** The rows, newest activity first (rows without an entry last). */
  list(): ConversationSummary[] {
    return [...this.rows.values()].sort((a, b) => {
      const x = big(a.last?.seq), y = big(b.last?.seq);
      return x === y ? (a.conversation < b.conversation ? -1 : 1) : x > y ? -1 : 1;
    });
  }

  get(conversation: string): ConversationSummary | undefined {
    return this.rows.get(conversation);
  }

  /** Conversations with unread messages, over the rows held; a muted one is no badge (not counted). */
  unreadConversations(now = Date.now()): number {
    let n = 0;
    for (const r of this.rows.values()) if ((r.unread > 0 || r.unread_capped) && !isMuted(r, now)) n++;
    return n;
  }

  /** MUTE_OK or MUTE_CHANGED. False if there is no row or nothing changed. */
  applyMute(m: { conversation: string; muted: boolean; muted_until: number | null }): boolean {
    const row = this.rows.get(m.conversation);
    if (!row || (row.muted === m.muted && (row.muted_until ?? null) === m.muted_until)) return false;
    row.muted = m.muted;
    row.muted_until = m.muted_until;
    return true;
  }

  clear(): void {
    this.rows.clear();
    this.nextBefore = null;
    this.started = false;
  }

  /**
   * A page from the server: its rows replace the ones held (the server's counts are exact at the frontier
   * it read; the client replays what reached it after it asked, see QimClient). Receipts only rise.
   * `first`: the newest page (no `before`), where the list starts.
   */
  applyPage(page: ConversationsPage, first: boolean): void {
    for (const incoming of page.conversations) {
      const row: ConversationSummary = {
        ...incoming,
        last: incoming.last ?? null,
        peer_read_through: incoming.peer_read_through ?? null,
        peer_delivered_through: incoming.peer_delivered_through ?? null,
      };
      const had = this.rows.get(row.conversation);
      if (had?.peer_read_through)
        row.peer_read_through = row.peer_read_through === null ? had.peer_read_through : maxId(row.peer_read_through, had.peer_read_through);
      if (had?.peer_delivered_through)
        row.peer_delivered_through =
          row.peer_delivered_through === null ? had.peer_delivered_through : maxId(row.peer_delivered_through, had.peer_delivered_through);
      if (row.name == null && had?.name != null) row.name = had.name;
      this.rows.set(row.conversation, row);
    }
    if (!first || !this.started) this.nextBefore = page.next_before;
    this.started = true;
  }

  /**
   * An entry of the user's mailbox, in seq order. Returns 'changed', 'unchanged', or 'unknown' (no row
   * for its conversation and newer than the pages held: a row is made from it, counted from a read mark
   * of 0, and the caller should refetch the first page to learn the server's). Before the first page:
   * 'unchanged' (not tracked).
   */
  applyEntry(e: Entry): 'changed' | 'unchanged' | 'unknown' {
    if (!this.started || e.deleted_for_me) return 'unchanged'; // a stub: deleted for me, not activity
    const me = this.me() ?? '';
    let row = this.rows.get(e.conversation);
    let result: 'changed' | 'unknown' = 'changed';
    if (!row) {
      // A conversation past the pages held: its entries at or below where they end are the server's
      // (counted in a row not read yet); only a newer one means new activity.
      if (this.nextBefore !== null && big(e.seq) <= big(this.nextBefore)) return 'unchanged';
      result = 'unknown';
      const direct = e.conversation.startsWith('d:');
      const parts = e.conversation.split(':');
      row = {
        conversation: e.conversation,
        kind: direct ? 'direct' : 'group',
        last: null,
        read_seq: '0',
        unread: 0,
        unread_capped: false,
        peer_read_through: null,
        peer_delivered_through: null,
      };
      if (direct && parts.length === 3) row.peer = parts[1] === me ? parts[2] : parts[1];
      this.rows.set(e.conversation, row);
    }
    const seq = big(e.seq);
    if (seq <= big(row.last?.seq)) return result === 'unknown' ? result : 'unchanged'; // counted already
    row.last = e;
    if (seq > big(row.read_seq) && countsAsUnread(e, me) && !row.unread_capped) {
      row.unread++;
      if (row.unread > UNREAD_CAP) {
        row.unread = UNREAD_CAP;
        row.unread_capped = true;
      }
    }
    return result;
  }

  /** READ_OK or READ_STATE. False if nothing changed (no row, or an older mark). */
  applyRead(r: Pick<ReadState, 'conversation' | 'read_seq' | 'unread' | 'unread_capped'>): boolean {
    const row = this.rows.get(r.conversation);
    if (!row) return false;
    if (big(r.read_seq) < big(row.read_seq)) return false;
    row.read_seq = r.read_seq;
    row.unread = r.unread;
    row.unread_capped = r.unread_capped;
    return true;
  }

  /** A receipt: in a direct conversation, the peer's raises `peer_read_through`. */
  applyReceipt(r: Pick<Receipt, 'conversation' | 'user' | 'read_through'>): boolean {
    const row = this.rows.get(r.conversation);
    if (!row || row.kind !== 'direct' || r.user === this.me()) return false;
    const next = row.peer_read_through === null ? r.read_through : maxId(row.peer_read_through, r.read_through);
    if (next === row.peer_read_through) return false;
    row.peer_read_through = next;
    return true;
  }

  applyDelivered(d: Pick<Delivered, 'conversation' | 'message_id'>): boolean {
    const row = this.rows.get(d.conversation);
    if (!row || row.kind !== 'direct') return false;
    const next = row.peer_delivered_through === null ? d.message_id : maxId(row.peer_delivered_through, d.message_id);
    if (next === row.peer_delivered_through) return false;
    row.peer_delivered_through = next;
    return true;
  }
}
