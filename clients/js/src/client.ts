// QimClient: one user's connection to a QIM gateway and the documented client loop (docs/protocol.md
// "The client's loop"): AUTH, SYNC from the stored cursor until `more` is false, pushes applied only when
// they continue what is held (`from <= cursor`), holes healed by SYNC (seq gaps and SYNC_NEEDED), and
// after any close a reconnect with exponential back-off that starts the loop again from the cursor. Sends
// carry a client_msg_id and are retried with the same id on UNAVAILABLE, RATE_LIMITED, timeouts and lost
// connections, so a retry never makes a second message.
//
// The loop's cursor and runs are in mailbox_loop.ts; the options and interfaces in client_options.ts; the
// events in client_events.ts; attach()'s upload in attach_flow.ts; the push target in push_registration.ts;
// the inbox and the message changes in inbox_feed.ts and changes_feed.ts. This file is the connection.
//
// Runs in browsers (the native WebSocket) and in Node 20 (pass the `ws` package's WebSocket).
import { QimAuthError, QimConnectionError, QimError, QimTimeoutError } from './errors.js';
import type {
  AuthOk,
  ClientFrame,
  Entry,
  ErrorFrame,
  HistoryPage,
  SendAck,
  ServerFrame,
} from './frames.js';
import { parseServerFrame } from './frames.js';
import type { ConnectionState, QimClientOptions, SendRequest, WebSocketLike } from './client_options.js';
import { badUrl, MemoryCursorStore } from './client_options.js';
import { MailboxLoop } from './mailbox_loop.js';
import type { GroupClientFrame, GroupMembersList, GroupOk, GroupRole, GroupsList, GroupSummary } from './groups.js';
import { isGroupSystemEntry, parseGroupEvent } from './groups.js';
import type { ConversationSummary, ConversationsPage, PresenceSetting, ReadOk, ReceiptsPage, ReceiptsSetting, Settings } from './inbox.js';
import { InboxFeed } from './inbox_feed.js';
import { ChangesFeed } from './changes_feed.js';
import type { ClientEvents } from './client_events.js';
import type { EditAck, MessageState, RecallAck } from './lifecycle.js';
import type { ReactAck, UnreactAck } from './reactions.js';
import type { BlockOk, DeleteOk, MuteOk } from './privacy.js';
import type { PushConfig, PushProvider, PushRegistered, PushRegistrationLike, PushUnregistered, WebPushRegistration } from './push.js';
import { enableWebPush } from './push.js';
import { PushRegistration } from './push_registration.js';
import type { AttachInput, AttachmentInfo, AttachmentRef, AttachmentUrlOk, AttachOk, AttachOptions } from './attachments.js';
import { attachFile } from './attach_flow.js';
import type { PresenceInfo, TypingState } from './signals.js';

export type { ConnectionState, CursorStore, QimClientOptions, SendRequest, SendTarget, WebSocketLike } from './client_options.js';
export { MemoryCursorStore } from './client_options.js';

type Events = ClientEvents;
type Listener<T> = (value: T) => void;

interface Pending {
  resolve(frame: ServerFrame): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

const OPEN = 1;

function newClientMsgId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return `m-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class QimClient {
  private readonly opts: Required<Omit<QimClientOptions, 'WebSocket' | 'createSocket' | 'token'>> &
    Pick<QimClientOptions, 'token'>;
  private readonly makeSocket: (url: string) => WebSocketLike;
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();
  private socket: WebSocketLike | null = null;
  private generation = 0; // bumped per connection: answers of an old one are ignored
  private nextRef = 1;
  private readonly pending = new Map<string, Pending>();
  private stateValue: ConnectionState = 'idle';
  private authOk: AuthOk | null = null;
  private closedByUser = false;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private onlineWaiters: Array<() => void> = [];

  // The client loop over the mailbox (mailbox_loop.ts).
  private readonly loop: MailboxLoop;
  private readonly feed: InboxFeed;
  private syncedSinceConnect = false;
  private readonly changes: ChangesFeed;
  private tokenInUse: string | null = null;
  private revokedToken: string | null = null;
  private readonly push: PushRegistration;

  constructor(options: QimClientOptions) {
    this.opts = {
      url: options.url,
      token: options.token,
      cursorStore: options.cursorStore ?? new MemoryCursorStore(),
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      reconnectInitialMs: options.reconnectInitialMs ?? 250,
      reconnectMaxMs: options.reconnectMaxMs ?? 10_000,
      sendAttempts: options.sendAttempts ?? 8,
      syncLimit: options.syncLimit ?? 200,
      dedupWindow: options.dedupWindow ?? 1024,
      typingIntervalMs: options.typingIntervalMs ?? 3000,
    };
    this.feed = new InboxFeed(
      {
        me: () => this.authOk?.user ?? null,
        online: () => this.stateValue === 'online',
        call: async (frame) => {
          await this.whenOnline(this.opts.requestTimeoutMs);
          return this.request({ ...frame, ref: this.ref() });
        },
        fire: (frame) => this.fire(frame),
        emit: (event, value) => this.emit(event, value as Events[typeof event]),
        error: (e) => this.emit('error', e),
      },
      this.opts.typingIntervalMs,
    );
    this.changes = new ChangesFeed({
      me: () => this.authOk?.user ?? null,
      call: async (frame) => {
        await this.whenOnline(this.opts.requestTimeoutMs);
        return this.request({ ...frame, ref: this.ref() });
      },
      callRetried: (frame) => this.retried(() => ({ ...frame, ref: this.ref() })),
      emit: (event, value) => this.emit(event, value as Events[typeof event]),
      listMute: (m) => this.feed.onMute(m),
      listRefresh: () => this.feed.refresh(),
    });
    if (options.createSocket) {
      this.makeSocket = options.createSocket;
    } else {
      const Ctor =
        options.WebSocket ?? (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
      if (!Ctor) throw new Error('QimClient: no WebSocket here; pass options.WebSocket (Node: the ws package)');
      this.makeSocket = (url) => new Ctor(url);
    }
    this.push = new PushRegistration({
      call: async (frame) => {
        await this.whenOnline(this.opts.requestTimeoutMs);
        return this.request({ ...frame, ref: this.ref() });
      },
      error: (e) => this.emit('error', e),
    });
    this.loop = new MailboxLoop(
      {
        generation: () => this.generation,
        request: (frame) => this.request(frame),
        ref: () => this.ref(),
        pushOnly: () => this.authOk?.delivery === 'push',
        backoffDelay: (attempt) => this.backoffDelay(attempt),
        counted: (e) => this.feed.onEntry(e),
        shown: (e) => this.showEntry(e),
        synced: (cursor) => {
          this.emit('synced', { cursor });
          this.feed.onSynced(!this.syncedSinceConnect);
          this.syncedSinceConnect = true;
        },
        error: (e) => this.emit('error', e),
      },
      this.opts.cursorStore,
      this.opts.syncLimit,
      this.opts.dedupWindow,
    );
  }

  /** Entries skipped because their message was shown before (a second copy). */
  get duplicates(): number {
    return this.loop.duplicates;
  }

  /** The cursor (decimal string): every entry at or below it has been emitted as `message`. */
  get cursor(): string {
    return this.loop.cursor;
  }
  get state(): ConnectionState {
    return this.stateValue;
  }
  /** The last AUTH_OK (user, device, delivery mode), null before the first. */
  get session(): AuthOk | null {
    return this.authOk;
  }

  on<K extends keyof Events>(event: K, fn: Listener<Events[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as Listener<never>);
    return () => set!.delete(fn as Listener<never>);
  }

  /**
   * Connects and authenticates; resolves with the first AUTH_OK (the first SYNC then runs; `synced` says
   * when it is done). Rejects with QimAuthError (a QimError, code UNAUTHENTICATED) if the token is refused
   * (the client then stops); at once with QimConnectionError if the URL is not a ws:// or wss:// URL; with
   * QimConnectionError naming the URL and the last error if it is not online within `connectTimeoutMs`
   * (the client then closes), or if close() comes first. Until then a connection that fails is retried
   * with back-off (`state` goes 'offline', `error` tells why).
   */
  start(): Promise<AuthOk> {
    if (this.stateValue !== 'idle') return Promise.reject(new Error('QimClient: already started'));
    const bad = badUrl(this.opts.url);
    if (bad) return Promise.reject(new QimConnectionError(bad));
    this.closedByUser = false;
    return new Promise<AuthOk>((resolve, reject) => {
      let first = true;
      let lastError: Error | null = null;
      let timer: ReturnType<typeof setTimeout> | null = null;
      const settle = (fn: () => void) => {
        first = false;
        offState();
        offError();
        if (timer) clearTimeout(timer);
        fn();
      };
      const offState = this.on('state', (s) => {
        if (!first || (s !== 'online' && s !== 'closed')) return;
        if (s === 'online') settle(() => resolve(this.authOk!));
        else settle(() => reject(new QimConnectionError('the client was closed before it was online')));
      });
      const offError = this.on('error', (e) => {
        if (!first) return;
        lastError = e;
        if (e instanceof QimError || this.stateValue === 'closed') settle(() => reject(e));
      });
      if (this.opts.connectTimeoutMs > 0) {
        const ms = this.opts.connectTimeoutMs;
        timer = setTimeout(() => {
          if (!first) return;
          const why = lastError ? ` (last error: ${lastError.message})` : '';
          const error = new QimConnectionError(
            `could not connect to ${this.opts.url} within ${ms} ms${why}: is the QIM server running there?`,
          );
          settle(() => reject(error));
          this.close();
        }, ms);
      }
      void this.connect();
    });
  }

  /** Closes the connection for good (no reconnect). Pending requests fail with QimConnectionError. */
  close(): void {
    this.closedByUser = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const s = this.socket;
    this.socket = null;
    this.dropConnection(new QimConnectionError('the client was closed'));
    if (s && s.readyState <= OPEN) s.close(1000, 'client closed');
    this.setState('closed');
  }

  /**
   * Sends one message and resolves with its SEND_ACK (durable on the server). Retried with the same
   * client_msg_id on UNAVAILABLE, RATE_LIMITED, timeouts and lost connections (waiting for the reconnect),
   * so it is stored once whatever happens. Rejects with the QimError for other refusals (FORBIDDEN,
   * INVALID_ARGUMENT, TOO_LARGE, ...) or the last error after `sendAttempts` tries.
   */
  async send(request: SendRequest): Promise<SendAck> {
    const clientMsgId = request.clientMsgId ?? newClientMsgId();
    let last: Error = new Error('send: not attempted');
    for (let attempt = 0; attempt < this.opts.sendAttempts; attempt++) {
      if (attempt > 0) await sleep(this.backoffDelay(attempt - 1));
      try {
        await this.whenOnline(this.opts.requestTimeoutMs);
        const base = {
          type: 'SEND' as const,
          ref: this.ref(),
          client_msg_id: clientMsgId,
          body: request.body,
          ...(request.attachments ? { attachments: request.attachments } : {}),
          ...(request.replyTo !== undefined ? { reply_to: request.replyTo } : {}),
        };
        const frame: ClientFrame =
          request.to !== undefined ? { ...base, to: request.to } : { ...base, conversation: request.conversation! };
        return (await this.request(frame)) as SendAck;
      } catch (e) {
        last = e as Error;
        const retry =
          (e instanceof QimError && e.retryable) || e instanceof QimTimeoutError || e instanceof QimConnectionError;
        if (!retry || this.closedByUser) throw e;
      }
    }
    throw last;
  }

  /**
   * One page of a conversation's history, newest first; `before` (a message_id) pages back: pass the page's
   * `next_before` while `more` (a page may end early by bytes, or hold no message at all).
   */
  async history(conversation: string, options: { before?: string; limit?: number } = {}): Promise<HistoryPage> {
    await this.whenOnline(this.opts.requestTimeoutMs);
    const frame: ClientFrame = { type: 'HISTORY', ref: this.ref(), conversation };
    if (options.before !== undefined) frame.before = options.before;
    if (options.limit !== undefined) frame.limit = options.limit;
    // Folded with the edits, recalls and reactions the client holds: never older than what the pushes
    // showed. The page's reactions count every event held before it was asked.
    const through = this.changes.eventsThrough(conversation);
    return this.changes.foldPage((await this.request(frame)) as HistoryPage, through);
  }

  // ---- attachments (docs/protocol.md "Attachments") ----
  // The bytes go straight to the object store with the presigned URL ATTACH answers, never through the
  // gateway. Refusals are QimErrors: ATTACHMENTS_DISABLED (no store on this server), UNSUPPORTED_TYPE,
  // TOO_LARGE, QUOTA_EXCEEDED, FORBIDDEN, BLOCKED, NOT_A_MEMBER (ATTACH); ATTACHMENT_MISSING,
  // ATTACHMENT_MISMATCH (the SEND); UNKNOWN_ATTACHMENT (ATTACHMENT_URL); the upload's failure a QimUploadError.

  /**
   * ATTACH, then the upload with the answer's method and headers, with progress (options.onProgress). A failed
   * upload is tried again (options.uploadAttempts, default 3), after a fresh ATTACH when the URL expired or the
   * store refused it (403). Resolves with the reference to pass to send({attachments}).
   */
  attach(conversation: string, file: AttachInput, options: AttachOptions = {}): Promise<AttachmentRef> {
    return attachFile(
      {
        ready: () => this.whenOnline(this.opts.requestTimeoutMs),
        request: (frame) => this.request({ ...frame, ref: this.ref() }) as Promise<AttachOk>,
        closed: () => this.closedByUser,
        backoffDelay: (attempt) => this.backoffDelay(attempt),
      },
      conversation,
      file,
      options,
    );
  }

  /**
   * attach() then a SEND of one message with the file and `caption` (default ''): resolves with the SEND_ACK
   * and the reference. The SEND is retried as send() retries it.
   */
  async sendFile(
    conversation: string,
    file: AttachInput,
    caption = '',
    options: AttachOptions & { clientMsgId?: string } = {},
  ): Promise<{ ack: SendAck; attachment: AttachmentRef }> {
    const attachment = await this.attach(conversation, file, options);
    const ack = await this.send({ conversation, body: caption, attachments: [attachment], clientMsgId: options.clientMsgId });
    return { ack, attachment };
  }

  /**
   * A short-lived download URL of one attachment of a message (`thumbnail`: of its thumbnail, when the body
   * says `thumbnail: true`). Refused UNKNOWN_ATTACHMENT for anything the user may not have.
   */
  async attachmentUrl(
    conversation: string,
    messageId: string,
    attachment: string | AttachmentInfo | AttachmentRef,
    options: { thumbnail?: boolean } = {},
  ): Promise<AttachmentUrlOk> {
    await this.whenOnline(this.opts.requestTimeoutMs);
    const frame: ClientFrame = {
      type: 'ATTACHMENT_URL',
      ref: this.ref(),
      conversation,
      message_id: messageId,
      attachment: typeof attachment === 'string' ? attachment : attachment.attachment,
      thumbnail: options.thumbnail ?? false,
    };
    return (await this.request(frame)) as AttachmentUrlOk;
  }

  // ---- editing and recalling (docs/protocol.md "Editing and recalling") ----
  // Each resolves with the ACK once fanout decided the event (the change then reaches every member's
  // mailbox: `messageState` follows). Retried with the same client_msg_id on RATE_LIMITED, timeouts and lost
  // connections (idempotent), not on UNAVAILABLE ("appended but not decided yet": read history()). Rejects
  // with QimError UNKNOWN_MESSAGE, NOT_ALLOWED, WINDOW_PASSED, MESSAGE_RECALLED, FORBIDDEN, ...

  /** Edits a message the user sent (`messageId`: its SEND_ACK's id) to `body`. */
  edit(conversation: string, messageId: string, body: string, clientMsgId?: string): Promise<EditAck> {
    return this.changes.edit(conversation, messageId, body, clientMsgId ?? newClientMsgId());
  }
  /** Recalls ("unsends for everyone") a message: its sender, or a group's owner or admin. */
  recall(conversation: string, messageId: string, clientMsgId?: string): Promise<RecallAck> {
    return this.changes.recall(conversation, messageId, clientMsgId ?? newClientMsgId());
  }
  /**
   * Adds the user's reaction `emoji` (one emoji grapheme or a `:short_code:`) to a message of
   * `conversation`; resolves with REACT_ACK once decided (every member's mailbox then gets the event:
   * `messageState` follows with the counts). Retried as edit() is. Refusals: QimError BAD_REACTION,
   * REACTION_LIMIT, REACTION_UNCHANGED (the user holds it already), UNKNOWN_MESSAGE, MESSAGE_RECALLED, ...
   */
  react(conversation: string, messageId: string, emoji: string, clientMsgId?: string): Promise<ReactAck> {
    return this.changes.reaction(true, conversation, messageId, emoji, clientMsgId ?? newClientMsgId()) as Promise<ReactAck>;
  }
  /** Takes the user's reaction `emoji` back (REACTION_UNCHANGED if they do not hold it). */
  unreact(conversation: string, messageId: string, emoji: string, clientMsgId?: string): Promise<UnreactAck> {
    return this.changes.reaction(false, conversation, messageId, emoji, clientMsgId ?? newClientMsgId()) as Promise<UnreactAck>;
  }
  /** A message's current state as this client knows it (from the mailbox, history() and the events), if held. */
  messageState(messageId: string): MessageState | undefined {
    return this.changes.messageState(messageId);
  }

  // ---- blocking, muting, delete for me (docs/protocol.md "Blocking", "Mute", "Delete for me") ----
  // Not retried (BLOCK, UNBLOCK, MUTE, UNMUTE are idempotent: repeat one that got no answer). Refusals:
  // QimError INVALID_ARGUMENT, FORBIDDEN, NOT_FOUND, RATE_LIMITED, UNAVAILABLE.

  /** Blocks a user: their direct messages to the user are refused BLOCKED, their typing and presence stop. */
  block(user: string): Promise<BlockOk> {
    return this.changes.block(user, true);
  }
  unblock(user: string): Promise<BlockOk> {
    return this.changes.block(user, false);
  }
  /** The users the user blocks, sorted (read from the server; the client's copy is made the same). */
  blocks(): Promise<string[]> {
    return this.changes.blocks();
  }
  /** Whom the user blocks, as this client knows it (blocks(), block(), BLOCK_CHANGED). */
  get blockedUsers(): string[] {
    return this.changes.blockedUsers;
  }
  /** Mutes a conversation for ever, or until `until` (ms since the epoch). */
  mute(conversation: string, until?: number): Promise<MuteOk> {
    return this.changes.mute(conversation, true, until);
  }
  unmute(conversation: string): Promise<MuteOk> {
    return this.changes.mute(conversation, false);
  }
  /** Deletes one message (`messageId`) or the whole conversation up to its latest message, for the user's own devices only. */
  deleteForMe(conversation: string, messageId?: string): Promise<DeleteOk> {
    return this.changes.deleteForMe(conversation, messageId);
  }

  // ---- offline push (docs/protocol.md "Push", docs/push.md) ----
  // Not retried (PUSH_REGISTER replaces the device's registration: repeating one is harmless). Refusals are
  // QimErrors: UNKNOWN_PROVIDER, BAD_PUSH_TOKEN, TOO_MANY_DEVICES, INVALID_ARGUMENT, UNAVAILABLE; a server
  // from before push answers UNKNOWN_TYPE.

  /** Which providers the deployment sends through (`[]`: push is off) and its VAPID public key (base64url). */
  pushConfig(): Promise<PushConfig> {
    return this.push.config();
  }
  /**
   * Registers where this device is woken when it has no live connection (one target per device: a new one
   * replaces it). The client sends it again after every later AUTH, until unregisterPush().
   */
  registerPush(provider: PushProvider, token: string): Promise<PushRegistered> {
    return this.push.register(provider, token);
  }
  /** Clears this device's push target (none registered: still PUSH_UNREGISTERED). */
  unregisterPush(): Promise<PushUnregistered> {
    return this.push.unregister();
  }
  /**
   * In a browser: subscribes the service worker `registration`'s PushManager with the server's VAPID key and
   * registers the subscription (PUSH_REGISTER webpush). Rejects with WebPushError (`reason`: unsupported,
   * permission, server, subscribe) or the server's QimError. See push.ts enableWebPush.
   */
  enableWebPush(registration: PushRegistrationLike): Promise<WebPushRegistration> {
    return enableWebPush(this, registration);
  }

  // Sends a frame made anew per try (a fresh ref, the same client_msg_id), retried on RATE_LIMITED, timeouts
  // and lost connections (waiting for the reconnect), not on UNAVAILABLE ("appended, not decided yet").
  private async retried(make: () => Extract<ClientFrame, { ref: string }>): Promise<ServerFrame> {
    let last: Error = new Error('not attempted');
    for (let attempt = 0; attempt < this.opts.sendAttempts; attempt++) {
      if (attempt > 0) await sleep(this.backoffDelay(attempt - 1));
      try {
        await this.whenOnline(this.opts.requestTimeoutMs);
        return await this.request(make());
      } catch (e) {
        last = e as Error;
        const retry =
          (e instanceof QimError && e.code === 'RATE_LIMITED') || e instanceof QimTimeoutError || e instanceof QimConnectionError;
        if (!retry || this.closedByUser) throw e;
      }
    }
    throw last;
  }

  // ---- groups (docs/protocol.md "Groups") ----
  // Membership ops are not retried: GROUP_OK means durable and applied; UNAVAILABLE may mean "appended,
  // not applied yet", and the protocol says to re-read members() rather than repeat the op. Each rejects
  // with the server's refusal as a QimError (UNKNOWN_GROUP, NOT_A_MEMBER, NOT_ALLOWED, GROUP_FULL,
  // INVALID_ARGUMENT, UNAVAILABLE), a QimTimeoutError, or a QimConnectionError if the connection goes.

  /** Creates a group named `name` with the caller as owner and `members` (0..500 users) as members. */
  createGroup(name: string, members: string[] = []): Promise<GroupOk> {
    return this.groupCall({ type: 'GROUP_CREATE', ref: '', name, members }) as Promise<GroupOk>;
  }
  /** Adds 1..500 users (owner or admin). Rejects with QimError NOT_ALLOWED, GROUP_FULL, NOT_A_MEMBER, ... */
  addMembers(group: string, members: string[]): Promise<GroupOk> {
    return this.groupCall({ type: 'GROUP_ADD', ref: '', group, members }) as Promise<GroupOk>;
  }
  /** Removes 1..500 members (owner; an admin removes plain members). */
  removeMembers(group: string, members: string[]): Promise<GroupOk> {
    return this.groupCall({ type: 'GROUP_REMOVE', ref: '', group, members }) as Promise<GroupOk>;
  }
  /** Leaves the group (the owner cannot: NOT_ALLOWED). */
  leaveGroup(group: string): Promise<GroupOk> {
    return this.groupCall({ type: 'GROUP_LEAVE', ref: '', group }) as Promise<GroupOk>;
  }
  /** Renames the group (owner or admin; 1..256 bytes). */
  renameGroup(group: string, name: string): Promise<GroupOk> {
    return this.groupCall({ type: 'GROUP_RENAME', ref: '', group, name }) as Promise<GroupOk>;
  }
  /** Sets a member's role (owner only; `owner` cannot be given). */
  setRole(group: string, member: string, role: Exclude<GroupRole, 'owner'>): Promise<GroupOk> {
    return this.groupCall({ type: 'GROUP_ROLE', ref: '', group, member, role }) as Promise<GroupOk>;
  }
  /** The caller's current groups, sorted by id. */
  async groups(): Promise<GroupSummary[]> {
    return ((await this.groupCall({ type: 'GROUPS', ref: '' })) as GroupsList).groups;
  }
  /** The group's name and current members sorted by user (members only: else NOT_A_MEMBER). */
  members(group: string): Promise<GroupMembersList> {
    return this.groupCall({ type: 'GROUP_MEMBERS', ref: '', group }) as Promise<GroupMembersList>;
  }

  private async groupCall(frame: GroupClientFrame): Promise<ServerFrame> {
    await this.whenOnline(this.opts.requestTimeoutMs);
    return this.request({ ...frame, ref: this.ref() });
  }

  // ---- the inbox (docs/protocol.md "Inbox") and typing and presence ("Typing and presence") ----
  // Requests wait for the connection (up to requestTimeoutMs) and are not retried; refusals are QimErrors
  // (FORBIDDEN, INVALID_ARGUMENT, RATE_LIMITED, UNAVAILABLE, ...).

  /**
   * One page of the user's conversations, newest activity first (`before`: the previous page's
   * `next_before`; `limit` 1..200, default 50). The first call without `before` starts the list the client
   * keeps current (`conversationList`, the `conversations` event) from the mailbox's entries and the
   * read-state pushes; later pages add to it.
   */
  conversations(options: { before?: string; limit?: number } = {}): Promise<ConversationsPage> {
    return this.feed.conversations(options);
  }
  /** The conversation list as the client knows it (empty before a first `conversations()`). */
  get conversationList(): ConversationSummary[] {
    return this.feed.list.list();
  }
  /**
   * READ: the user has read `conversation` up to `seq` of their mailbox (default: its last entry the
   * client knows). The mark only rises and is clamped to the last visible entry; the other devices get
   * READ_STATE, the other members a RECEIPT (if the user's receipts are on). Resolves with READ_OK.
   */
  markRead(conversation: string, seq?: string): Promise<ReadOk> {
    return this.feed.markRead(conversation, seq);
  }
  /** Who has read `messageId` of `conversation`: a count, and the readers for a small enough group. */
  receipts(conversation: string, messageId: string): Promise<ReceiptsPage> {
    return this.feed.receipts(conversation, messageId);
  }
  /** Reads the user's settings, or changes the ones given (`receipts` on/off, `presence` everyone/contacts/nobody). */
  settings(change: { receipts?: ReceiptsSetting; presence?: PresenceSetting } = {}): Promise<Settings> {
    return this.feed.settings(change);
  }
  /**
   * Says the user is typing in `conversation` (call it on every keystroke: a start goes out at most once
   * per `typingIntervalMs`), or stopped (`'stop'`, only after a start). Never answered unless refused (an
   * `error` event). False when nothing was sent.
   */
  typing(conversation: string, state: TypingState = 'start'): boolean {
    return this.feed.typing(conversation, state);
  }
  /** Who is typing in `conversation` now (their indicators expire by themselves). */
  typingUsers(conversation: string): string[] {
    return this.feed.typingUsers(conversation);
  }
  /** Follows these users' presence (a bounded list; direct peers are followed anyway); resolves with their state now. */
  subscribePresence(users: string[]): Promise<PresenceInfo[]> {
    return this.feed.subscribePresence(users);
  }
  /** The last known presence of a user (from PRESENCE_STATE or PRESENCE), undefined if none came. */
  presence(user: string): PresenceInfo | undefined {
    return this.feed.presence(user);
  }

  /** SYNC from the cursor now (e.g. in delivery mode pull, where nothing is pushed). */
  resync(): void {
    if (this.stateValue !== 'online') return;
    this.loop.resync();
  }

  /** Resolves once the client is online (authenticated), rejects after `timeoutMs` or on close(). */
  whenOnline(timeoutMs: number): Promise<void> {
    if (this.stateValue === 'online') return Promise.resolve();
    if (this.stateValue === 'closed') return Promise.reject(new QimConnectionError('the client is closed'));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.onlineWaiters = this.onlineWaiters.filter((w) => w !== done);
        reject(new QimTimeoutError('waiting for the connection', timeoutMs));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        if (this.stateValue === 'online') resolve();
        else reject(new QimConnectionError('the client is closed'));
      };
      this.onlineWaiters.push(done);
    });
  }

  // ---- connection ----

  private async connect(): Promise<void> {
    if (this.closedByUser) return;
    this.setState('connecting');
    const generation = ++this.generation;
    let token: string;
    try {
      token = typeof this.opts.token === 'function' ? await this.opts.token() : this.opts.token;
    } catch (e) {
      this.emit('error', e as Error);
      this.scheduleReconnect();
      return;
    }
    if (generation !== this.generation || this.closedByUser) return;
    if (this.revokedToken !== null && token === this.revokedToken) {
      // Never again with a revoked token: no reconnect loop; the app signs the user in again.
      this.emit('error', new QimAuthError('session revoked: the token function gave the revoked token again'));
      this.close();
      return;
    }
    this.tokenInUse = token;
    let socket: WebSocketLike;
    try {
      socket = this.makeSocket(this.opts.url);
    } catch (e) {
      this.emit('error', e as Error);
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (generation !== this.generation) return;
      this.request({ type: 'AUTH', ref: this.ref(), token }, true).then(
        (ok) => {
          if (generation !== this.generation) return;
          this.authOk = ok as AuthOk;
          this.attempt = 0;
          this.setState('online');
          this.loop.beginSync();
          this.push.again();
        },
        (e: Error) => {
          if (generation !== this.generation) return;
          if (e instanceof QimError && e.message.includes('session revoked:')) this.onRevoked(e.message);
          this.emit('error', e);
          // A refused token is final when it cannot change; a token function may give a fresh one.
          if (e instanceof QimError && typeof this.opts.token !== 'function') this.close();
        },
      );
    };
    socket.onmessage = (ev) => {
      if (generation !== this.generation) return;
      const text = typeof ev.data === 'string' ? ev.data : String(ev.data);
      const frame = parseServerFrame(text);
      if (frame) this.onFrame(frame);
    };
    socket.onerror = (ev) => {
      // onclose follows with the code; this says why (ws gives a message, browsers do not).
      if (generation !== this.generation) return;
      const why = (ev as { message?: string } | null)?.message;
      this.emit('error', new QimConnectionError(`WebSocket error on ${this.opts.url}${why ? `: ${why}` : ''}`));
    };
    socket.onclose = (ev) => {
      if (generation !== this.generation) return;
      this.socket = null;
      this.dropConnection(new QimConnectionError(`connection closed (${ev.code} ${ev.reason})`, ev.code, ev.reason));
      if (this.closedByUser) return;
      const fixedToken = typeof this.opts.token !== 'function';
      if (ev.code === 4001) {
        this.onRevoked(ev.reason);
        if (fixedToken) return this.close();
      } else if (ev.code === 1008 && ev.reason.startsWith('token expired')) {
        this.emit('expired', { reason: ev.reason });
        if (fixedToken) return this.close();
      }
      this.setState('offline');
      this.scheduleReconnect();
    };
  }

  private onRevoked(reason: string): void {
    if (this.tokenInUse !== null && this.revokedToken === this.tokenInUse) return; // told once per token
    this.revokedToken = this.tokenInUse;
    this.emit('revoked', { reason });
  }

  // Fails what waits on this connection; the loop starts again at step 1 on the next one.
  private dropConnection(error: QimConnectionError): void {
    this.generation++;
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    this.pending.clear();
    this.loop.reset();
    this.syncedSinceConnect = false;
    this.feed.onOffline();
  }

  private backoffDelay(attempt: number): number {
    const ceiling = Math.min(this.opts.reconnectMaxMs, this.opts.reconnectInitialMs * 2 ** Math.min(attempt, 20));
    return Math.round(ceiling * (0.5 + Math.random() / 2));
  }

  private scheduleReconnect(): void {
    if (this.closedByUser || this.reconnectTimer) return;
    const delay = this.backoffDelay(this.attempt++);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, delay);
  }

  private setState(s: ConnectionState): void {
    if (this.stateValue === s) return;
    this.stateValue = s;
    if (s === 'online' || s === 'closed') {
      const waiters = this.onlineWaiters;
      this.onlineWaiters = [];
      for (const w of waiters) w();
    }
    this.emit('state', s);
  }

  private emit<K extends keyof Events>(event: K, value: Events[K]): void {
    for (const fn of this.listeners.get(event) ?? []) {
      try {
        (fn as Listener<Events[K]>)(value);
      } catch (e) {
        if (event !== 'error') this.emit('error', e as Error);
      }
    }
  }

  private ref(): string {
    return `r${this.nextRef++}`;
  }

  // Sends a frame with a ref and resolves with the answer carrying it (an ERROR rejects as QimError).
  private request(frame: Extract<ClientFrame, { ref: string }>, beforeAuth = false): Promise<ServerFrame> {
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN || (!beforeAuth && this.stateValue !== 'online'))
      return Promise.reject(new QimConnectionError('not connected'));
    return new Promise<ServerFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(frame.ref);
        reject(new QimTimeoutError(frame.type, this.opts.requestTimeoutMs));
      }, this.opts.requestTimeoutMs);
      this.pending.set(frame.ref, { resolve, reject, timer });
      socket.send(JSON.stringify(frame));
    });
  }

  // Sends a frame that has no answer (TYPING); false if not connected.
  private fire(frame: ClientFrame): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN || this.stateValue !== 'online') return false;
    socket.send(JSON.stringify(frame));
    return true;
  }

  private onFrame(frame: ServerFrame): void {
    if ('ref' in frame && frame.ref !== undefined && this.pending.has(frame.ref)) {
      const p = this.pending.get(frame.ref)!;
      this.pending.delete(frame.ref);
      clearTimeout(p.timer);
      if (frame.type === 'ERROR')
        p.reject(
          frame.code === 'UNAUTHENTICATED'
            ? new QimAuthError(frame.message, frame.ref)
            : new QimError(frame.code, frame.message, frame.ref),
        );
      else p.resolve(frame);
      return;
    }
    switch (frame.type) {
      case 'DELIVER':
        this.loop.onDeliver(frame);
        break;
      case 'SYNC_NEEDED':
        this.resync();
        break;
      case 'ERROR':
        this.emit('error', new QimError((frame as ErrorFrame).code, (frame as ErrorFrame).message));
        break;
      default:
        if (!this.changes.onPush(frame)) this.feed.onPush(frame);
        break;
    }
  }

  // An entry the loop shows (the first copy of its message): flagged, emitted, folded.
  private showEntry(e: Entry): void {
    this.changes.mark(e);
    this.emit('message', e);
    if (isGroupSystemEntry(e)) this.emit('group', parseGroupEvent(e));
    this.changes.onEntry(e); // an edit, recall or reaction folded into its message (messageEvent, messageState)
  }
}
