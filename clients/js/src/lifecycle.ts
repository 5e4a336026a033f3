// Editing and recalling (docs/protocol.md "Editing and recalling"): the frames, the event entries the
// mailbox carries (`~edit`, `~recall`, with a JSON body naming the message), and the message-state fold:
// one function that gives a message's current state from its entry and the event entries that follow.
// The fold is open: an event kind it does not know is ignored, never thrown. Reactions (`~react`,
// `~unreact`) are kinds of it too; their aggregation is in reactions.ts (decision 145).
import { captionOf, editedBody } from './attachments.js';
import type { Entry, HistoryMessage, Quote } from './frames.js';
import type { Reaction, ReactionFact } from './reactions.js';
import { REACT_ENTRY_ID, UNREACT_ENTRY_ID, foldReactions, sameReactions } from './reactions.js';

/**
 * The answer to a message event (EDIT, RECALL, REACT, UNREACT): `message_id` is the event's own id, `target`
 * the message it changes.
 */
export interface EventAck<T extends string> {
  type: T;
  ref?: string;
  client_msg_id: string;
  message_id: string;
  target: string;
  conversation: string;
  server_time: number;
}

/** EDIT's answer. */
export type EditAck = EventAck<'EDIT_ACK'>;

/** RECALL's answer. */
export type RecallAck = EventAck<'RECALL_ACK'>;

export type LifecycleServerFrame = EditAck | RecallAck;

export type LifecycleClientFrame =
  | { type: 'EDIT'; ref: string; client_msg_id: string; conversation: string; message_id: string; body: string }
  | { type: 'RECALL'; ref: string; client_msg_id: string; conversation: string; message_id: string };

export const LIFECYCLE_SERVER_TYPES = ['EDIT_ACK', 'RECALL_ACK'] as const;

/** The refusals of EDIT and RECALL besides the common ones (NOT_ALLOWED too: not the sender). */
export type LifecycleErrorCode = 'UNKNOWN_MESSAGE' | 'WINDOW_PASSED' | 'MESSAGE_RECALLED';

/** The client_msg_ids of the event entries (system entries: never unread). */
export const EDIT_ENTRY_ID = '~edit';
export const RECALL_ENTRY_ID = '~recall';

interface EventBase {
  /** The message changed. */
  target: string;
  conversation: string;
  /** The event entry's own message id (duplicates of one event share it). */
  event_id: string;
  /** Who made the change (the entry's sender). */
  by: string;
  server_time: number;
  /** The event entry's seq in the mailbox, when it came from one. */
  seq?: string;
}
export interface EditEvent extends EventBase {
  kind: 'edit';
  body: string;
  edited_at: number;
  edit_count: number;
}
export interface RecallEvent extends EventBase {
  kind: 'recall';
}
/** A reaction added (`react`) or taken back (`unreact`); `count`: how many hold `emoji` right after it. */
export interface ReactionEvent extends EventBase {
  kind: 'react' | 'unreact';
  emoji: string;
  count: number;
}
export type MessageEvent = EditEvent | RecallEvent | ReactionEvent;

const EVENT_ENTRY_IDS = new Set([EDIT_ENTRY_ID, RECALL_ENTRY_ID, REACT_ENTRY_ID, UNREACT_ENTRY_ID]);
const EVENT_KINDS = new Set(['edit', 'recall', 'react', 'unreact']);

/**
 * Whether an entry (or a conversation list's `last`, which carries no client_msg_id) is an edit, recall or
 * reaction event rather than a message.
 */
export function isMessageEventEntry(e: { client_msg_id?: unknown; body?: unknown }): boolean {
  if (typeof e.client_msg_id === 'string' && EVENT_ENTRY_IDS.has(e.client_msg_id)) return true;
  if (e.client_msg_id !== undefined || typeof e.body !== 'string' || !e.body.startsWith('{"event":')) return false;
  const kind = eventKindOf(e.body);
  return kind !== null && EVENT_KINDS.has(kind);
}

function eventKindOf(body: string): string | null {
  try {
    const o = JSON.parse(body) as { event?: unknown };
    return o && typeof o.event === 'string' ? o.event : null;
  } catch {
    return null;
  }
}

/**
 * Reads an event entry. Null for an entry that is not one (a message, a group's system entry), for an
 * event kind this SDK does not know, and for a body that does not parse: never throws.
 */
export function parseMessageEvent(e: Pick<Entry, 'conversation' | 'sender' | 'message_id' | 'server_time' | 'body'> & {
  client_msg_id?: string;
  seq?: string;
}): MessageEvent | null {
  if (e.client_msg_id !== undefined && !e.client_msg_id.startsWith('~')) return null;
  let o: Record<string, unknown>;
  try {
    const v = JSON.parse(e.body) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    o = v as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof o.message_id !== 'string') return null;
  const base: EventBase = {
    target: o.message_id,
    conversation: e.conversation,
    event_id: e.message_id,
    by: typeof o.by === 'string' ? o.by : e.sender,
    server_time: e.server_time,
  };
  if (e.seq !== undefined) base.seq = e.seq;
  if (o.event === 'edit' && typeof o.body === 'string') {
    return {
      ...base,
      kind: 'edit',
      body: o.body,
      edited_at: typeof o.edited_at === 'number' ? o.edited_at : e.server_time,
      edit_count: typeof o.edit_count === 'number' ? o.edit_count : 1,
    };
  }
  if (o.event === 'recall') return { ...base, kind: 'recall' };
  if ((o.event === 'react' || o.event === 'unreact') && typeof o.emoji === 'string' && o.emoji !== '') {
    // `count` is the server's (decision 124); an entry without one counts the event alone.
    const count = typeof o.count === 'number' && o.count >= 0 ? o.count : o.event === 'react' ? 1 : 0;
    return { ...base, kind: o.event, emoji: o.emoji, count };
  }
  return null; // a kind this SDK does not know (yet)
}

/** A message as it is now. */
export interface MessageState {
  message_id: string;
  conversation: string;
  sender: string;
  sender_device?: string;
  client_msg_id?: string;
  server_time: number;
  /** The current body: the last edit's text with the message's attachments (editedBody), '' once recalled. */
  body: string;
  /** The last edit's server time; null if never edited. */
  edited_at: number | null;
  edit_count: number;
  recalled: boolean;
  /** Who recalled it (the sender, or a group's owner or admin), when known. */
  recalled_by?: string;
  /** The mailbox seq of the message's own entry, when it came from the mailbox. */
  seq?: string;
  /** Reactions per emoji in the order first added, `mine` for the reader; [] for none (and once recalled). */
  reactions: Reaction[];
  /** The message this one replies to, and the server's quote of it (decision 125), when it is a reply. */
  reply_to?: string;
  quote?: Quote;
}

/** A message as HISTORY serves it (its current state) or as the mailbox holds it (as sent). */
export type MessageBase = (HistoryMessage | Entry) & {
  edited_at?: number;
  edit_count?: number;
  recalled?: boolean;
  reactions?: Reaction[];
};

/** Who reads (for `mine`), and through which event position the base's reactions are counted. */
export interface FoldOptions {
  /** The reader's user id: their own reaction events give `mine`. Without it, `mine` is the base's. */
  me?: string | null;
  /**
   * The base's reactions (HISTORY's) count every event at or below this position (a message id of the
   * conversation): those change nothing. Default: none, every event given is folded on top of the base.
   */
  reactionsThrough?: string;
}

/**
 * The fold: a message's current state from its entry (or HISTORY's message, already current up to its
 * `edit_count`) and the events that follow, in any order and with duplicates. Rules: events about another
 * message and kinds this SDK does not know are ignored; the edit with the highest `edit_count` gives the
 * body's text, and the base's attachments stay (`editedBody`: an edit never changes the files; an edit the
 * base already counts changes nothing); a recall wins over every edit, before or after
 * it (the server refuses edits after a recall: one that raced it is still overridden), and clears the
 * reactions; reactions are HISTORY's aggregate (if the base has one) with the newer events on top
 * (`foldReactions`): the newest event per emoji gives its count, the reader's newest per emoji `mine`.
 */
export function foldMessage(base: MessageBase, events: Iterable<MessageEvent | Entry>, options: FoldOptions = {}): MessageState {
  const state: MessageState = {
    message_id: base.message_id,
    conversation: base.conversation,
    sender: base.sender,
    server_time: base.server_time,
    body: base.recalled ? '' : base.body,
    edited_at: base.edited_at ?? null,
    edit_count: base.edit_count ?? 0,
    recalled: base.recalled === true,
    reactions: [],
  };
  if (base.reply_to !== undefined) state.reply_to = base.reply_to;
  if (base.quote !== undefined) state.quote = base.quote;
  if (base.sender_device !== undefined) state.sender_device = base.sender_device;
  if (base.client_msg_id !== undefined) state.client_msg_id = base.client_msg_id;
  if ('seq' in base && base.seq !== undefined) state.seq = base.seq;
  const reactions: ReactionFact[] = [];
  for (const item of events) {
    const ev = 'kind' in item ? item : parseMessageEvent(item);
    if (!ev || ev.target !== base.message_id) continue;
    if (ev.kind === 'react' || ev.kind === 'unreact') {
      reactions.push(ev);
    } else if (ev.kind === 'recall') {
      state.recalled = true;
      state.recalled_by = ev.by;
      state.body = '';
    } else if (ev.kind === 'edit' && ev.edit_count > state.edit_count) {
      state.edit_count = ev.edit_count;
      state.edited_at = ev.edited_at;
      // An edit changes the text and keeps the message's attachments (decision 152): whatever the edit's
      // body (the server's composed body, or plain text from an older server), the files are the message's.
      if (!state.recalled) state.body = editedBody(base.body, ev.body);
    }
  }
  // A recalled message's reactions are no longer served (docs/protocol.md "Reactions").
  if (!state.recalled) state.reactions = foldReactions(base.reactions, reactions, options.me ?? null, options.reactionsThrough);
  return state;
}

/** How a list row or a notification shows an event entry: "edited: <body>", "message recalled", "reacted 👍". */
export function eventPreview(e: MessageEvent): string {
  switch (e.kind) {
    case 'recall':
      return 'message recalled';
    case 'react':
      return `reacted ${e.emoji}`;
    case 'unreact':
      return `removed ${e.emoji}`;
    default:
      return `edited: ${captionOf(e.body)}`;
  }
}

/**
 * The states of the messages a client has seen, kept current: messages (from the mailbox or HISTORY) and
 * events in whatever order they come. An event whose message is not held yet waits (bounded: the oldest
 * targets are dropped past `maxPending`) and is folded in when the message comes. Each `apply*` returns
 * the message's new state when it changed, else null. `me` names the reader (their reactions are `mine`).
 */
export class MessageStates {
  private readonly bases = new Map<string, MessageBase>();
  // HISTORY's reactions per message and the event position they count through (decision 145); a mailbox
  // entry as sent carries none, so it never replaces them.
  private readonly reactionBases = new Map<string, { reactions: Reaction[]; through?: string }>();
  private readonly events = new Map<string, MessageEvent[]>();
  private readonly states = new Map<string, MessageState>();
  // Per conversation, the highest event position held: what a HISTORY asked now counts at least.
  private readonly eventsTop = new Map<string, bigint>();

  constructor(
    private readonly maxMessages = 10_000,
    private readonly maxPending = 1024,
    private readonly me: () => string | null = () => null,
  ) {}

  get(messageId: string): MessageState | undefined {
    return this.states.get(messageId);
  }

  /**
   * The highest event position held in `conversation` (undefined: none). Read it before asking HISTORY and
   * pass it to applyMessage with the page's messages: every event held then is counted by the page.
   */
  eventsThrough(conversation: string): string | undefined {
    return this.eventsTop.get(conversation)?.toString();
  }

  /**
   * A message (a mailbox entry of a message, or a HISTORY message). A HISTORY message (no `seq`) brings
   * its reactions, counted through `through`: `eventsThrough` as it was when the page was asked (null: no
   * event was held then, every event folds on top); when not given, the events held now.
   */
  applyMessage(m: MessageBase, through?: string | null): MessageState | null {
    const fromHistory = !('seq' in m) || m.seq === undefined;
    if (fromHistory) {
      const at = through === undefined ? this.eventsThrough(m.conversation) : (through ?? undefined);
      this.reactionBases.set(m.message_id, at === undefined ? { reactions: m.reactions ?? [] } : { reactions: m.reactions ?? [], through: at });
      this.bound(this.reactionBases, this.maxMessages);
    }
    const had = this.bases.get(m.message_id);
    // HISTORY's state is current up to its edit_count; keep the most advanced base.
    if (had && (had.edit_count ?? 0) > (m.edit_count ?? 0) && !m.recalled) return fromHistory ? this.refold(m.message_id) : null;
    this.bases.set(m.message_id, m);
    this.bound(this.bases, this.maxMessages);
    return this.refold(m.message_id);
  }

  /** An event (or an event entry). Null when it changed nothing known (or is not an event). */
  applyEvent(item: MessageEvent | Entry): MessageState | null {
    const ev = 'kind' in item ? item : parseMessageEvent(item);
    if (!ev) return null;
    const list = this.events.get(ev.target) ?? [];
    if (list.some((x) => x.event_id === ev.event_id)) return null; // a duplicate
    list.push(ev);
    this.events.set(ev.target, list);
    if (/^[0-9]+$/.test(ev.event_id)) {
      const at = BigInt(ev.event_id);
      const top = this.eventsTop.get(ev.conversation);
      if (top === undefined || at > top) this.eventsTop.set(ev.conversation, at);
      this.bound(this.eventsTop, this.maxMessages);
    }
    if (!this.bases.has(ev.target)) {
      this.bound(this.events, this.maxPending + this.bases.size);
      return null; // waits for its message
    }
    return this.refold(ev.target);
  }

  private refold(id: string): MessageState | null {
    const base = this.bases.get(id);
    if (!base) return null;
    const rb = this.reactionBases.get(id);
    const before = this.states.get(id);
    const options: FoldOptions = { me: this.me() };
    if (rb?.through !== undefined) options.reactionsThrough = rb.through;
    const now = foldMessage(rb ? { ...base, reactions: rb.reactions } : base, this.events.get(id) ?? [], options);
    this.states.set(id, now);
    this.bound(this.states, this.maxMessages);
    if (
      before &&
      before.body === now.body &&
      before.recalled === now.recalled &&
      before.edit_count === now.edit_count &&
      before.edited_at === now.edited_at &&
      sameReactions(before.reactions, now.reactions)
    )
      return null;
    return now;
  }

  private bound<V>(map: Map<string, V>, max: number): void {
    while (map.size > max) map.delete(map.keys().next().value as string);
  }
}
