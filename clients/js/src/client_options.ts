// What a QimClient is made with: its options, the WebSocket and cursor-store interfaces it uses, what a
// send names, and the check of the gateway URL (client.ts re-exports the public ones).
import type { AttachmentRef } from './attachments.js';

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
export type SendRequest = SendTarget & {
  body: string;
  clientMsgId?: string;
  /** References from attach() (docs/protocol.md "Attachments"): `body` is then the caption and may be ''. */
  attachments?: AttachmentRef[];
  /** Replies to this message of the same conversation (its message_id): SEND's `reply_to` (decision 125). */
  replyTo?: string;
};

// Why `url` cannot be a gateway's address (a message naming it and the expected form), or null when it can.
export function badUrl(url: unknown): string | null {
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
