// QimClient: one user's connection to a QIM gateway and the documented client loop (docs/protocol.md
// "The client's loop"): AUTH, SYNC from the stored cursor until `more` is false, pushes applied only when
// they continue what is held (`from <= cursor`), holes healed by SYNC (seq gaps and SYNC_NEEDED), and
// after any close a reconnect with exponential back-off that starts the loop again from the cursor. Sends
// carry a client_msg_id and are retried with the same id on UNAVAILABLE, RATE_LIMITED, timeouts and lost
// connections, so a retry never makes a second message.
//
// Runs in browsers (the native WebSocket) and in Node 20 (pass the `ws` package's WebSocket).
import { QimAuthError, QimConnectionError, QimError, QimTimeoutError } from './errors.js';
import type {
  AuthOk,
  ClientFrame,
  Deliver,
  Entry,
  ErrorFrame,
  HistoryPage,
  SendAck,
  ServerFrame,
  SyncPage,
} from './frames.js';
import { parseServerFrame } from './frames.js';
import type { GroupClientFrame, GroupEvent, GroupMembersList, GroupOk, GroupRole, GroupsList, GroupSummary } from './groups.js';
import { isGroupSystemEntry, parseGroupEvent } from './groups.js';
import type { ConversationSummary, ConversationsPage, PresenceSetting, ReadOk, ReceiptsPage, ReceiptsSetting, Settings } from './inbox.js';
import { InboxFeed, type InboxEvents } from './inbox_feed.js';
import type { PresenceInfo, TypingState } from './signals.js';

/** The part of the WebSocket API the client uses (browsers' WebSocket and `ws` both have it). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** Where the cursor ("every entry at or below it has been shown") is kept between sessions. */
export interface CursorStore {
  load(): string | null;
  save(cursor: string): void;
  /** Optional: the message ids shown last (oldest first), kept with the cursor so a restart skips their copies too. */
  loadRecentIds?(): string[] | null;
  saveRecentIds?(ids: string[]): void;
}

export class MemoryCursorStore implements CursorStore {
  private value: string | null = null;
  load(): string | null {
    return this.value;
  }
  save(cursor: string): void {
    this.value = cursor;
  }
}

export type ConnectionState = 'idle' | 'connecting' | 'online' | 'offline' | 'closed';

export interface QimClientOptions {
  /** ws:// or wss:// address of a gateway, e.g. `ws://127.0.0.1:7400/`. */
  url: string;
  /** The access token, or a function giving one (called on every connect: tokens expire). */
  token: string | (() => string | Promise<string>);
  /** The WebSocket class; default: globalThis.WebSocket (browsers). In Node 20: `import WebSocket from 'ws'`. */
  WebSocket?: new (url: string) => WebSocketLike;
  /** Instead of WebSocket: makes the socket (e.g. `(u) => new WebSocket(u, { ca })` to trust a dev CA). */
  createSocket?: (url: string) => WebSocketLike;
  /** Default: in memory (a new client starts from 0). */
  cursorStore?: CursorStore;
  /**
   * How long `start()` tries to get online (connect and AUTH, with retries) before it rejects with a
   * QimConnectionError naming the URL and the last error, and the client closes. Default 10000; 0: keep
   * trying until close(). Once online, reconnects after a loss keep trying whatever this is.
   */
  connectTimeoutMs?: number;
  /** How long a request waits for its answer. Default 10000. */
  requestTimeoutMs?: number;
  /** Reconnect back-off: the first delay, doubled per failed attempt up to the maximum (with jitter). */
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** How many times send() tries before it gives up. Default 8. */
  sendAttempts?: number;
  /** Entries per SYNC page (1..500). Default 200. */
  syncLimit?: number;
  /** Message ids remembered to skip a second copy of a message (split brain: once per epoch). Default 1024; 0: off. */
  dedupWindow?: number;
  /** typing(): at most one start per conversation this often (the server rate-limits TYPING). Default 3000. */
  typingIntervalMs?: number;
}

export type SendTarget = { to: string; conversation?: never } | { conversation: string; to?: never };
export type SendRequest = SendTarget & { body: string; clientMsgId?: string };

interface Events extends InboxEvents {
  /** A mailbox entry above the cursor, in seq order, each once; each message once (by message_id); a
   * group's system entries too. */
  message: Entry;
  /** A group's system entry (`~group:<op>`), parsed; emitted right after its `message`. */
  group: GroupEvent;
  state: ConnectionState;
  /** A SYNC run finished: the cursor is at least the frontier it read. */
  synced: { cursor: string };
  /** Something went wrong that the client handles itself (it keeps going); for logs and UIs. */
  error: Error;
}
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

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

// Why `url` cannot be a gateway's address (a message naming it and the expected form), or null when it can.
function badUrl(url: unknown): string | null {
  const expected = 'expected ws://host:port/ or wss://host:port/, e.g. ws://127.0.0.1:7400/';
  if (typeof url !== 'string' || url === '') return `no gateway URL given (${expected})`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `bad gateway URL '${url}': ${expected}`;
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') return `bad gateway URL '${url}': ${expected}`;
  return null;
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

  // The client loop (the same states as src/client/mailbox_feed.h).
  private cursorValue: bigint;
  private syncing = false;
  private resyncWanted = false;
  private syncAfter = 0n;
  private readonly pushes: Deliver[] = [];
  // The last dedupWindow message ids shown (a Set keeps insertion order: the oldest is first).
  private readonly recentIds = new Set<string>();
  private duplicateCount = 0;
  private readonly feed: InboxFeed;
  private syncedSinceConnect = false;

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
    if (options.createSocket) {
      this.makeSocket = options.createSocket;
    } else {
      const Ctor =
        options.WebSocket ?? (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
      if (!Ctor) throw new Error('QimClient: no WebSocket here; pass options.WebSocket (Node: the ws package)');
      this.makeSocket = (url) => new Ctor(url);
    }
    const stored = this.opts.cursorStore.load();
    this.cursorValue = stored && /^[0-9]+$/.test(stored) ? BigInt(stored) : 0n;
    for (const id of this.opts.cursorStore.loadRecentIds?.() ?? []) this.remember(id);
  }

  /** Entries skipped because their message was shown before (a second copy). */
  get duplicates(): number {
    return this.duplicateCount;
  }

  /** The cursor (decimal string): every entry at or below it has been emitted as `message`. */
  get cursor(): string {
    return this.cursorValue.toString();
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
        const base = { type: 'SEND' as const, ref: this.ref(), client_msg_id: clientMsgId, body: request.body };
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
    return (await this.request(frame)) as HistoryPage;
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
    if (this.syncing) this.resyncWanted = true;
    else this.beginSync();
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
          this.beginSync();
        },
        (e: Error) => {
          if (generation !== this.generation) return;
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
      this.setState('offline');
      this.scheduleReconnect();
    };
  }

  // Fails what waits on this connection; the loop starts again at step 1 on the next one.
  private dropConnection(error: QimConnectionError): void {
    this.generation++;
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    this.pending.clear();
    this.syncing = false;
    this.resyncWanted = false;
    this.pushes.length = 0;
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
        this.onDeliver(frame);
        break;
      case 'SYNC_NEEDED':
        this.resync();
        break;
      case 'ERROR':
        this.emit('error', new QimError((frame as ErrorFrame).code, (frame as ErrorFrame).message));
        break;
      default:
        this.feed.onPush(frame);
        break;
    }
  }

  // ---- the client loop ----

  private beginSync(): void {
    this.syncing = true;
    this.resyncWanted = false;
    this.syncAfter = this.cursorValue;
    this.requestPage();
  }

  private requestPage(): void {
    const generation = this.generation;
    const frame: ClientFrame = {
      type: 'SYNC',
      ref: this.ref(),
      after: this.syncAfter.toString(),
      limit: this.opts.syncLimit,
    };
    this.request(frame).then(
      (page) => {
        if (generation === this.generation) this.onPage(page as SyncPage);
      },
      (e: Error) => {
        if (generation !== this.generation) return; // the connection went: the next one syncs again
        if (e instanceof QimError && e.code === 'EXPIRED_CURSOR' && this.syncAfter !== 0n) {
          // Below the trim: read from the oldest retained entry; the cursor still filters what is shown.
          this.syncAfter = 0n;
          this.requestPage();
          return;
        }
        this.syncing = false;
        this.emit('error', e);
        if (e instanceof QimTimeoutError || (e instanceof QimError && e.retryable)) {
          setTimeout(() => {
            if (generation === this.generation) this.resync();
          }, this.backoffDelay(1));
        }
      },
    );
  }

  private onPage(page: SyncPage): void {
    this.show(page.entries);
    if (page.entries.length > 0) this.syncAfter = BigInt(page.entries[page.entries.length - 1].seq);
    if (page.more && page.entries.length > 0) {
      this.requestPage();
      return;
    }
    // The run is complete: it held every entry up to the frontier it was bounded by.
    this.setCursor(max(this.cursorValue, BigInt(page.frontier)));
    if (this.resyncWanted) {
      this.beginSync();
      return;
    }
    this.syncing = false;
    this.emit('synced', { cursor: this.cursor });
    this.feed.onSynced(!this.syncedSinceConnect);
    this.syncedSinceConnect = true;
    this.drainPushes();
  }

  private onDeliver(d: Deliver): void {
    if (this.syncing) {
      this.pushes.push(d);
      return;
    }
    if (!this.apply(d)) {
      this.pushes.push(d); // once the SYNC is done it is either covered or continues
      this.beginSync();
    }
  }

  // Applies a push that continues what is held; false if it may follow a hole (then SYNC first).
  private apply(d: Deliver): boolean {
    const continues = d.from !== undefined && BigInt(d.from) <= this.cursorValue;
    const syncAllowed = this.authOk?.delivery !== 'push';
    if (!continues && syncAllowed) return false;
    this.show(d.entries);
    if (continues) this.setCursor(max(this.cursorValue, BigInt(d.frontier)));
    return true;
  }

  private drainPushes(): void {
    while (this.pushes.length > 0 && !this.syncing) {
      const d = this.pushes.shift()!;
      if (!this.apply(d)) {
        this.pushes.unshift(d);
        this.beginSync();
      }
    }
  }

  private show(entries: Entry[]): void {
    for (const e of entries) {
      const seq = BigInt(e.seq);
      if (seq <= this.cursorValue) continue; // shown already (a push and a SYNC page may overlap)
      this.setCursor(seq);
      this.feed.onEntry(e); // the server counts every entry (a second copy too)
      // The same message at another seq (split brain stores it once per epoch): passed, not shown again.
      if (e.message_id && e.message_id !== '0' && !this.remember(e.message_id)) {
        this.duplicateCount++;
        continue;
      }
      this.emit('message', e);
      if (isGroupSystemEntry(e)) this.emit('group', parseGroupEvent(e));
    }
    this.opts.cursorStore.saveRecentIds?.([...this.recentIds]);
  }

  // Remembers a message id; false if it was remembered already. At most dedupWindow ids are kept.
  private remember(id: string): boolean {
    if (this.opts.dedupWindow <= 0) return true;
    if (this.recentIds.has(id)) return false;
    this.recentIds.add(id);
    if (this.recentIds.size > this.opts.dedupWindow) {
      this.recentIds.delete(this.recentIds.values().next().value as string);
    }
    return true;
  }

  private setCursor(c: bigint): void {
    if (c === this.cursorValue) return;
    this.cursorValue = c;
    this.opts.cursorStore.save(c.toString());
  }
}
