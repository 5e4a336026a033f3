// What QimClient does with a message's changes and the user's privacy lists: EDIT and RECALL (retried with
// their client_msg_id), the message-state fold over the mailbox's entries and history pages (decision 134),
// BLOCK/UNBLOCK/BLOCKS, MUTE/UNMUTE, DELETE_FOR_ME and their pushes to the user's other devices, turned into
// typed events. Its own file so the client's loop stays readable; QimClient exposes its methods.
import type { ClientFrame, Entry, HistoryPage, ServerFrame } from './frames.js';
import { isGroupSystemEntry } from './groups.js';
import type { EditAck, MessageEvent, MessageState, RecallAck } from './lifecycle.js';
import { MessageStates, isMessageEventEntry, parseMessageEvent } from './lifecycle.js';
import type { ReactAck, UnreactAck } from './reactions.js';
import { sameReactions } from './reactions.js';
import type { BlockEvent, BlockOk, BlocksList, DeleteEvent, DeleteOk, MuteEvent, MuteOk } from './privacy.js';

export interface ChangesEvents {
  /** An edit, recall or reaction event entry, parsed (emitted right after its `message`); unknown kinds are not. */
  messageEvent: MessageEvent;
  /** A message's state changed (an edit, a recall, its reactions, or a message whose events came first): the fold's result. */
  messageState: MessageState;
  /** A block changed (BLOCK_OK here, BLOCK_CHANGED from another device). */
  block: BlockEvent;
  /** A mute changed (MUTE_OK here, MUTE_CHANGED from another device). */
  mute: MuteEvent;
  /** Messages were deleted for the user (DELETE_OK here, DELETED_FOR_ME from another device). */
  deleted: DeleteEvent;
}

/** What the feed needs of the client. */
export interface ChangesHost {
  /** The signed-in user (their reactions are `mine`), null before the first AUTH_OK. */
  me(): string | null;
  /** Waits until online, then sends a frame with a fresh ref and resolves with its answer. */
  call(frame: Extract<ClientFrame, { ref: string }>): Promise<ServerFrame>;
  /** The same, retried with the same frame (and client_msg_id) on RATE_LIMITED, timeouts and lost connections. */
  callRetried(frame: Extract<ClientFrame, { ref: string }>): Promise<ServerFrame>;
  emit<K extends keyof ChangesEvents>(event: K, value: ChangesEvents[K]): void;
  /** A mute onto the conversation list. */
  listMute(m: { conversation: string; muted: boolean; muted_until: number | null }): void;
  /** The conversation list read again (a delete for me may replace a row's latest entry, or drop the row). */
  listRefresh(): void;
}

export class ChangesFeed {
  private readonly states: MessageStates;
  private readonly blockedSet = new Set<string>();

  constructor(private readonly host: ChangesHost) {
    this.states = new MessageStates(undefined, undefined, () => host.me());
  }

  // ---- editing and recalling ----

  edit(conversation: string, messageId: string, body: string, clientMsgId: string): Promise<EditAck> {
    const frame = { type: 'EDIT' as const, ref: '', client_msg_id: clientMsgId, conversation, message_id: messageId, body };
    return this.host.callRetried(frame) as Promise<EditAck>;
  }

  recall(conversation: string, messageId: string, clientMsgId: string): Promise<RecallAck> {
    const frame = { type: 'RECALL' as const, ref: '', client_msg_id: clientMsgId, conversation, message_id: messageId };
    return this.host.callRetried(frame) as Promise<RecallAck>;
  }

  reaction(add: boolean, conversation: string, messageId: string, emoji: string, clientMsgId: string): Promise<ReactAck | UnreactAck> {
    const frame = { type: add ? ('REACT' as const) : ('UNREACT' as const), ref: '', client_msg_id: clientMsgId, conversation, message_id: messageId, emoji };
    return this.host.callRetried(frame) as Promise<ReactAck | UnreactAck>;
  }

  messageState(messageId: string): MessageState | undefined {
    return this.states.get(messageId);
  }

  /**
   * The position a HISTORY of `conversation` asked now counts the reactions through (read before asking);
   * null when no event of it is held.
   */
  eventsThrough(conversation: string): string | null {
    return this.states.eventsThrough(conversation) ?? null;
  }

  /**
   * A history page: HISTORY serves each message's state at its read; events that reached this client since
   * (or before, for a message it had not seen) are folded in, so a page never shows an older state than the
   * pushes did. `through`: `eventsThrough` as it was when the page was asked (its reactions count those).
   */
  foldPage(page: HistoryPage, through?: string | null): HistoryPage {
    page.messages = page.messages.map((m) => {
      this.states.applyMessage(m, through);
      const now = this.states.get(m.message_id);
      if (
        !now ||
        (now.edit_count === (m.edit_count ?? 0) &&
          now.recalled === (m.recalled === true) &&
          sameReactions(now.reactions, m.reactions ?? []))
      )
        return m;
      const folded = { ...m, body: now.body, edit_count: now.edit_count, recalled: now.recalled };
      if (now.edited_at !== null) folded.edited_at = now.edited_at;
      if (now.reactions.length > 0) folded.reactions = now.reactions;
      else delete folded.reactions;
      return folded;
    });
    return page;
  }

  /** An entry about to be emitted as `message`: flagged `from_blocked` by the client's own list too. */
  mark(e: Entry): void {
    if (e.sender !== undefined && this.blockedSet.has(e.sender) && !e.from_blocked) e.from_blocked = true;
  }

  /** An entry emitted as `message`: an event is folded into its message; a message may have its events already. */
  onEntry(e: Entry): void {
    if (isGroupSystemEntry(e)) return;
    if (isMessageEventEntry(e)) {
      const ev = parseMessageEvent(e);
      if (!ev) return; // a kind this SDK does not know: an entry, nothing more
      this.host.emit('messageEvent', ev);
      const changed = this.states.applyEvent(ev);
      if (changed) this.host.emit('messageState', changed);
      return;
    }
    if (typeof e.client_msg_id === 'string' && e.client_msg_id.startsWith('~')) return; // another system entry
    const st = this.states.applyMessage(e);
    // Its events came first (another device's SYNC order, a history read): the message as it is now.
    if (st && (st.edit_count > 0 || st.recalled || st.reactions.length > 0)) this.host.emit('messageState', st);
  }

  // ---- blocking, muting, delete for me ----

  async block(user: string, blocked: boolean): Promise<BlockOk> {
    const ok = (await this.host.call({ type: blocked ? 'BLOCK' : 'UNBLOCK', ref: '', user })) as BlockOk;
    return this.onBlock(ok, 'here');
  }

  async blocks(): Promise<string[]> {
    const users = ((await this.host.call({ type: 'BLOCKS', ref: '' })) as BlocksList).users;
    this.blockedSet.clear();
    for (const u of users) this.blockedSet.add(u);
    return users;
  }

  get blockedUsers(): string[] {
    return [...this.blockedSet].sort();
  }

  async mute(conversation: string, muted: boolean, until?: number): Promise<MuteOk> {
    const frame: Extract<ClientFrame, { type: 'MUTE' | 'UNMUTE' }> = muted
      ? { type: 'MUTE', ref: '', conversation }
      : { type: 'UNMUTE', ref: '', conversation };
    if (frame.type === 'MUTE' && until !== undefined) frame.until = until;
    return this.onMute((await this.host.call(frame)) as MuteOk, 'here');
  }

  async deleteForMe(conversation: string, messageId?: string): Promise<DeleteOk> {
    const frame: Extract<ClientFrame, { type: 'DELETE_FOR_ME' }> = { type: 'DELETE_FOR_ME', ref: '', conversation };
    if (messageId !== undefined) frame.message_id = messageId;
    return this.onDeleted((await this.host.call(frame)) as DeleteOk, 'here');
  }

  /** A push without a ref. True if it was one of the feed's. */
  onPush(f: ServerFrame): boolean {
    switch (f.type) {
      case 'BLOCK_CHANGED':
        this.onBlock(f, 'elsewhere');
        return true;
      case 'MUTE_CHANGED':
        this.onMute(f, 'elsewhere');
        return true;
      case 'DELETED_FOR_ME':
        this.onDeleted(f, 'elsewhere');
        return true;
      default:
        return false;
    }
  }

  private onBlock<T extends { user: string; blocked: boolean }>(f: T, origin: BlockEvent['origin']): T {
    if (f.blocked) this.blockedSet.add(f.user);
    else this.blockedSet.delete(f.user);
    this.host.emit('block', { user: f.user, blocked: f.blocked, origin });
    return f;
  }

  private onMute<T extends { conversation: string; muted: boolean; muted_until: number | null }>(f: T, origin: MuteEvent['origin']): T {
    const m = { conversation: f.conversation, muted: f.muted, muted_until: f.muted_until ?? null };
    this.host.listMute(m);
    this.host.emit('mute', { ...m, origin });
    return f;
  }

  private onDeleted<T extends { conversation: string; message_id?: string; through?: string }>(f: T, origin: DeleteEvent['origin']): T {
    const ev: DeleteEvent = { conversation: f.conversation, origin };
    if (f.message_id !== undefined) ev.message_id = f.message_id;
    if (f.through !== undefined) ev.through = f.through;
    this.host.emit('deleted', ev);
    this.host.listRefresh();
    return f;
  }
}
