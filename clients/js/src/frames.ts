// The frames of the QIM client protocol, version 1 (docs/protocol.md). 64-bit values (seq, message_id,
// from, frontier, trim, gap_through) stay decimal strings: they exceed JavaScript's exact integers.
import type { GroupClientFrame, GroupServerFrame } from './groups.js';
import type { InboxClientFrame, InboxServerFrame } from './inbox.js';
import { INBOX_SERVER_TYPES } from './inbox.js';
import type { AttachmentClientFrame, AttachmentErrorCode, AttachmentRef, AttachmentServerFrame } from './attachments.js';
import { ATTACHMENT_SERVER_TYPES } from './attachments.js';
import type { LifecycleClientFrame, LifecycleErrorCode, LifecycleServerFrame } from './lifecycle.js';
import { LIFECYCLE_SERVER_TYPES } from './lifecycle.js';
import type { PrivacyClientFrame, PrivacyServerFrame } from './privacy.js';
import { PRIVACY_SERVER_TYPES } from './privacy.js';
import type { PushClientFrame, PushErrorCode, PushServerFrame } from './push.js';
import { PUSH_SERVER_TYPES } from './push.js';
import type { Reaction, ReactionClientFrame, ReactionErrorCode, ReactionServerFrame } from './reactions.js';
import { REACTION_SERVER_TYPES } from './reactions.js';
import type { SignalClientFrame, SignalServerFrame } from './signals.js';
import { SIGNAL_SERVER_TYPES } from './signals.js';

/** The protocol's stable error codes (docs/protocol.md "Errors"). */
export type ErrorCode =
  | 'BAD_FRAME'
  | 'UNKNOWN_TYPE'
  | 'UNSUPPORTED_VERSION'
  | 'TOO_LARGE'
  | 'RATE_LIMITED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'EXPIRED_CURSOR'
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'INTERNAL'
  // Groups (docs/protocol.md "Groups").
  | 'UNKNOWN_GROUP'
  | 'NOT_A_MEMBER'
  | 'NOT_ALLOWED'
  | 'GROUP_FULL'
  // Blocking (docs/protocol.md "Blocking").
  | 'BLOCKED'
  // EDIT and RECALL (docs/protocol.md "Editing and recalling").
  | LifecycleErrorCode
  // REACT and UNREACT (docs/protocol.md "Reactions").
  | ReactionErrorCode
  // PUSH_REGISTER (docs/protocol.md "Push").
  | PushErrorCode
  // ATTACH, ATTACHMENT_URL, a SEND with attachments (docs/protocol.md "Attachments").
  | AttachmentErrorCode;

/**
 * DELIVER, SYNC, HISTORY: the quote of the message a reply replies to, in its current state (docs/protocol.md "Replies"):
 * its body cut to 100 characters, or `recalled`, or `unavailable` (no longer kept, not archived yet).
 */
export interface ReplyQuote {
  message_id: string;
  sender?: string;
  body?: string;
  truncated?: boolean;
  /** A message with attachments: how many (`body` is its caption). */
  attachments?: number;
  recalled?: boolean;
  unavailable?: boolean;
}

/** One message of a conversation's history (HISTORY_PAGE). */
export interface HistoryMessage {
  message_id: string;
  conversation: string;
  sender: string;
  sender_device: string;
  client_msg_id: string;
  server_time: number;
  body: string;
  /** A reply: the message_id of the message of the same conversation it replies to. */
  reply_to?: string;
  /** A reply: the replied message's quote, as of when the frame was made (absent where no history is served). */
  quote?: ReplyQuote;
  /** HISTORY: the last edit's server time, for an edited message. */
  edited_at?: number;
  /** HISTORY: how many times it was edited. */
  edit_count?: number;
  /** HISTORY: recalled (its body is then ''). */
  recalled?: boolean;
  /** For a reader who blocks the sender (in a group both are in). */
  from_blocked?: boolean;
  /** HISTORY: the reactions per emoji, in the order first added (absent: none). */
  reactions?: Reaction[];
}

/** The quote of a reply (decision 125): the name the SDK's message state uses. */
export type Quote = ReplyQuote;

/** One entry of the user's mailbox (a SYNC_PAGE or DELIVER entry). */
export interface Entry extends HistoryMessage {
  seq: string;
  /**
   * A SYNC stub of a message the user deleted for themselves (no sender, no body): it keeps its place for
   * the cursor; the client does not show it (QimClient emits no `message` for it).
   */
  deleted_for_me?: boolean;
}

export interface AuthOk {
  type: 'AUTH_OK';
  ref?: string;
  v: number;
  user: string;
  device: string;
  expires_at: number;
  delivery: 'hybrid' | 'push' | 'pull';
}

export interface SendAck {
  type: 'SEND_ACK';
  ref?: string;
  client_msg_id: string;
  message_id: string;
  conversation: string;
  server_time: number;
  duplicate: boolean;
}

export interface SyncPage {
  type: 'SYNC_PAGE';
  ref?: string;
  entries: Entry[];
  frontier: string;
  trim: string;
  more: boolean;
  gap_through: string | null;
}

export interface HistoryPage {
  type: 'HISTORY_PAGE';
  ref?: string;
  conversation: string;
  messages: HistoryMessage[];
  more: boolean;
  /** With `more`: the message_id to pass as `before` for the next page (the page may hold no message). */
  next_before?: string;
}

export interface Deliver {
  type: 'DELIVER';
  entries: Entry[];
  /** Absent from an older gateway: then the push may follow a hole. */
  from?: string;
  frontier: string;
}

export interface SyncNeeded {
  type: 'SYNC_NEEDED';
  reason: string;
}

export interface Pong {
  type: 'PONG';
  ref?: string;
}

export interface ErrorFrame {
  type: 'ERROR';
  ref?: string;
  code: ErrorCode;
  message: string;
}

export type ServerFrame =
  | AuthOk
  | SendAck
  | SyncPage
  | HistoryPage
  | Deliver
  | SyncNeeded
  | Pong
  | ErrorFrame
  | GroupServerFrame
  | InboxServerFrame
  | SignalServerFrame
  | LifecycleServerFrame
  | ReactionServerFrame
  | PrivacyServerFrame
  | PushServerFrame
  | AttachmentServerFrame;

/** A frame the client sends. `ref` correlates the answer. */
export type ClientFrame =
  | { type: 'AUTH'; ref: string; token: string }
  | { type: 'SEND'; ref: string; client_msg_id: string; to: string; body: string; attachments?: AttachmentRef[]; reply_to?: string }
  | { type: 'SEND'; ref: string; client_msg_id: string; conversation: string; body: string; attachments?: AttachmentRef[]; reply_to?: string }
  | { type: 'SYNC'; ref: string; after: string; limit?: number }
  | { type: 'HISTORY'; ref: string; conversation: string; before?: string; limit?: number }
  | { type: 'PING'; ref: string }
  | GroupClientFrame
  | InboxClientFrame
  | SignalClientFrame
  | LifecycleClientFrame
  | ReactionClientFrame
  | PrivacyClientFrame
  | PushClientFrame
  | AttachmentClientFrame;

const KNOWN = new Set<string>([
  'AUTH_OK',
  'SEND_ACK',
  'SYNC_PAGE',
  'HISTORY_PAGE',
  'DELIVER',
  'SYNC_NEEDED',
  'PONG',
  'ERROR',
  'GROUP_OK',
  'GROUPS_LIST',
  'GROUP_MEMBERS_LIST',
  ...INBOX_SERVER_TYPES,
  ...SIGNAL_SERVER_TYPES,
  ...LIFECYCLE_SERVER_TYPES,
  ...REACTION_SERVER_TYPES,
  ...PRIVACY_SERVER_TYPES,
  ...PUSH_SERVER_TYPES,
  ...ATTACHMENT_SERVER_TYPES,
]);

/**
 * Parses one text frame. Returns null for a frame that is not a JSON object with a string `type`, or whose
 * type this client does not know (the server may add types within version 1: they are ignored).
 */
export function parseServerFrame(text: string): ServerFrame | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const type = (v as { type?: unknown }).type;
  if (typeof type !== 'string' || !KNOWN.has(type)) return null;
  return v as ServerFrame;
}

/** The direct conversation id of two users: `d:<a>:<b>` with a before b bytewise. */
export function directConversation(a: string, b: string): string {
  const [x, y] = bytewiseLess(a, b) || a === b ? [a, b] : [b, a];
  return `d:${x}:${y}`;
}

/** The other member of a direct conversation, seen from `me` (me itself for a note to self). */
export function peerOf(conversation: string, me: string): string | null {
  const parts = conversation.split(':');
  if (parts.length !== 3 || parts[0] !== 'd') return null;
  if (parts[1] === me) return parts[2];
  if (parts[2] === me) return parts[1];
  return null;
}

// Names are ASCII ([A-Za-z0-9_.@-]), so UTF-16 order is byte order.
function bytewiseLess(a: string, b: string): boolean {
  return a < b;
}

/**
 * The largest SYNC_PAGE, HISTORY_PAGE or DELIVER the server sends (docs/protocol.md "Limits and closes"):
 * pages end early (`more`) and pushes are split rather than pass it.
 */
export const MAX_MESSAGE_FRAME_BYTES = 1024 * 1024;
/**
 * The largest frame a client must accept (the C++ client's limit too). Browsers take any size; with the
 * `ws` package in Node, its default maxPayload (100 MiB) is enough, and a smaller one must not go below this.
 */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
