// What QimClient does with the inbox and signal frames: the requests (READ, CONVERSATIONS, RECEIPTS,
// SETTINGS, TYPING, PRESENCE_SUBSCRIBE), the pushes turned into typed events, and the conversation list
// kept current (ConversationList's rules, decision 79). Its own file so the client's loop stays readable;
// QimClient hands it the frames and entries and exposes its methods.
import type { ClientFrame, Entry, ServerFrame } from './frames.js';
import {
  ConversationList,
  type ConversationSummary,
  type ConversationsPage,
  type Delivered,
  type PresenceSetting,
  type ReadOk,
  type Receipt,
  type ReceiptsPage,
  type ReceiptsSetting,
  type Settings,
  type SettingsOk,
} from './inbox.js';
import {
  type PresenceInfo,
  type PresenceStateFrame,
  type TypingEvent,
  TypingSender,
  type TypingState,
  TypingTracker,
} from './signals.js';

/** A read mark moved: by this connection's READ (`here`) or another device of the user (`elsewhere`). */
export interface ReadEvent {
  conversation: string;
  read_seq: string;
  unread: number;
  unread_capped: boolean;
  origin: 'here' | 'elsewhere';
}

export interface InboxEvents {
  read: ReadEvent;
  /** Another member read up to `read_through` (RECEIPT). */
  receipt: Receipt;
  /** The peer's mailbox holds `message_id` (DELIVERED, direct conversations). */
  delivered: Delivered;
  typing: TypingEvent;
  presence: PresenceInfo;
  /** The conversation list changed (after a first `conversations()`): all rows, newest activity first. */
  conversations: ConversationSummary[];
}

/** What the feed needs of the client. */
export interface FeedHost {
  me(): string | null;
  online(): boolean;
  /** Waits until online, then sends a frame with a fresh ref and resolves with its answer. */
  call(frame: Extract<ClientFrame, { ref: string }>): Promise<ServerFrame>;
  /** Sends a frame that has no answer; false if not connected. */
  fire(frame: ClientFrame): boolean;
  emit<K extends keyof InboxEvents>(event: K, value: InboxEvents[K]): void;
  error(e: Error): void;
}

export class InboxFeed {
  readonly list: ConversationList;
  private readonly typingIn: TypingTracker;
  private readonly typingOut: TypingSender;
  private readonly presenceOf = new Map<string, PresenceInfo>();
  private following: string[] = []; // the last explicit subscription, asked again on every new connection
  private resubscribe = false;
  // While a CONVERSATIONS request is out, what would change the list waits here and is replayed on the
  // page (the page was read at some frontier after the request left: an entry of the replay that it
  // covers is at or below its row's last and is not counted twice).
  private inFlight = 0;
  private readonly replay: Array<() => boolean> = [];
  private firstLimit = 50;
  private refreshing = false;
  private refreshAgain = false;

  constructor(private readonly host: FeedHost, typingIntervalMs: number) {
    this.list = new ConversationList(() => host.me());
    this.typingIn = new TypingTracker((e) => host.emit('typing', e));
    this.typingOut = new TypingSender(typingIntervalMs);
  }

  // ---- requests ----

  async conversations(options: { before?: string; limit?: number } = {}): Promise<ConversationsPage> {
    const first = options.before === undefined;
    if (first && options.limit !== undefined) this.firstLimit = options.limit;
    const frame: Extract<ClientFrame, { type: 'CONVERSATIONS' }> = { type: 'CONVERSATIONS', ref: '' };
    if (options.before !== undefined) frame.before = options.before;
    frame.limit = options.limit ?? this.firstLimit;
    this.inFlight++;
    let page: ConversationsPage;
    try {
      page = (await this.host.call(frame)) as ConversationsPage;
    } catch (e) {
      this.settle(null, first);
      throw e;
    }
    this.settle(page, first);
    return page;
  }

  async markRead(conversation: string, seq?: string): Promise<ReadOk> {
    const mark = seq ?? this.list.get(conversation)?.last?.seq;
    if (mark === undefined) throw new Error(`markRead: no seq given and no entry of ${conversation} known`);
    const ok = (await this.host.call({ type: 'READ', ref: '', conversation, seq: mark })) as ReadOk;
    this.onRead(ok, 'here');
    return ok;
  }

  receipts(conversation: string, messageId: string): Promise<ReceiptsPage> {
    return this.host.call({ type: 'RECEIPTS', ref: '', conversation, message_id: messageId }) as Promise<ReceiptsPage>;
  }

  async settings(change: { receipts?: ReceiptsSetting; presence?: PresenceSetting } = {}): Promise<Settings> {
    const frame: Extract<ClientFrame, { type: 'SETTINGS' }> = { type: 'SETTINGS', ref: '' };
    if (change.receipts !== undefined) frame.receipts = change.receipts;
    if (change.presence !== undefined) frame.presence = change.presence;
    return ((await this.host.call(frame)) as SettingsOk).settings;
  }

  typing(conversation: string, state: TypingState): boolean {
    if (!this.host.online() || !this.typingOut.shouldSend(conversation, state)) return false;
    return this.host.fire(state === 'stop' ? { type: 'TYPING', conversation, state } : { type: 'TYPING', conversation });
  }

  async subscribePresence(users: string[]): Promise<PresenceInfo[]> {
    this.following = [...users];
    const answer = (await this.host.call({ type: 'PRESENCE_SUBSCRIBE', ref: '', users })) as PresenceStateFrame;
    for (const p of answer.users ?? []) this.onPresence(p);
    return answer.users ?? [];
  }

  typingUsers(conversation: string): string[] {
    return this.typingIn.typing(conversation);
  }

  presence(user: string): PresenceInfo | undefined {
    return this.presenceOf.get(user);
  }

  // ---- what the client hands over ----

  /** A push without a ref (or whose ref no request waits for). True if it was one of the feed's. */
  onPush(f: ServerFrame): boolean {
    switch (f.type) {
      case 'READ_STATE':
        this.onRead(f, 'elsewhere');
        return true;
      case 'RECEIPT':
        this.host.emit('receipt', f);
        this.change(() => this.list.applyReceipt(f));
        return true;
      case 'DELIVERED':
        this.host.emit('delivered', f);
        this.change(() => this.list.applyDelivered(f));
        return true;
      case 'TYPING':
        this.typingIn.onFrame(f);
        return true;
      case 'PRESENCE':
        this.onPresence({ user: f.user, status: f.status, last_seen: f.last_seen ?? null });
        return true;
      case 'PRESENCE_STATE':
        for (const p of f.users ?? []) this.onPresence(p);
        return true;
      default:
        return false;
    }
  }

  /** An entry of the mailbox, new to this client (above its cursor), in seq order. */
  onEntry(e: Entry): void {
    this.typingIn.onEntry(e);
    if (e.sender === this.host.me()) this.typingOut.sent(e.conversation);
    this.change(() => {
      const r = this.list.applyEntry(e);
      if (r === 'unknown') this.refresh();
      return r !== 'unchanged';
    });
  }

  /** A SYNC run finished: after a (re)connect, pushes sent while offline are lost, so the list is read again. */
  onSynced(firstSinceConnect: boolean): void {
    if (!firstSinceConnect) return;
    if (this.list.started) this.refresh();
    // A subscription is the connection's: the new one is told again (and answers the state now).
    if (this.resubscribe && this.following.length > 0)
      this.subscribePresence(this.following).catch((e: Error) => this.host.error(e));
    this.resubscribe = false;
  }

  /** The connection went: typing indicators end (nothing renews them now), sends start anew. */
  onOffline(): void {
    this.resubscribe = this.following.length > 0;
    this.typingIn.clear();
    this.typingOut.clear();
  }

  // ---- the list ----

  private onRead(r: Omit<ReadEvent, 'origin'>, origin: ReadEvent['origin']): void {
    this.host.emit('read', {
      conversation: r.conversation,
      read_seq: r.read_seq,
      unread: r.unread,
      unread_capped: r.unread_capped,
      origin,
    });
    // A count above 0 may include entries on their way to this client, which would count them again:
    // the first page is read again (its rows' `last` says where the server's count ends).
    if (r.unread > 0 || r.unread_capped) this.refresh();
    this.change(() => this.list.applyRead(r));
  }

  private onPresence(p: PresenceInfo): void {
    const had = this.presenceOf.get(p.user);
    const info: PresenceInfo = { user: p.user, status: p.status, last_seen: p.last_seen ?? null };
    this.presenceOf.set(p.user, info);
    if (had?.status !== info.status || had?.last_seen !== info.last_seen) this.host.emit('presence', info);
  }

  // Applies a change to the list now, or after the page on its way; emits the list when it changed.
  private change(apply: () => boolean): void {
    if (this.inFlight > 0) {
      this.replay.push(apply);
      return;
    }
    if (apply() && this.list.started) this.emitList();
  }

  private settle(page: ConversationsPage | null, first: boolean): void {
    this.inFlight--;
    if (page) this.list.applyPage(page, first);
    if (this.inFlight > 0) return;
    for (const apply of this.replay.splice(0)) apply();
    if (this.list.started) this.emitList();
  }

  private emitList(): void {
    this.host.emit('conversations', this.list.list());
  }

  /** A MUTE_OK or MUTE_CHANGED onto the list. */
  onMute(m: { conversation: string; muted: boolean; muted_until: number | null }): void {
    this.change(() => this.list.applyMute(m));
  }

  // Reads the first page again (one at a time; asked again while one runs: once more after it). Public
  // for what changes rows in ways only the server knows (a delete for me replaces a row's latest entry).
  refresh(): void {
    if (!this.list.started) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    this.conversations({ limit: this.firstLimit })
      .catch((e: Error) => this.host.error(e))
      .finally(() => {
        this.refreshing = false;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          this.refresh();
        }
      });
  }
}
