// Blocking, muting and delete for me (docs/protocol.md "Blocking", "Mute", "Delete for me"): the frames,
// their answers and the pushes to the user's other connections (BLOCK_CHANGED, MUTE_CHANGED,
// DELETED_FOR_ME), as the server sends them.

export interface BlockOk {
  type: 'BLOCK_OK';
  ref?: string;
  user: string;
  blocked: boolean;
}
/** Pushed to the user's other connections when one of them blocked or unblocked someone. */
export interface BlockChanged {
  type: 'BLOCK_CHANGED';
  user: string;
  blocked: boolean;
}
export interface BlocksList {
  type: 'BLOCKS_LIST';
  ref?: string;
  /** Sorted. */
  users: string[];
}
export interface MuteOk {
  type: 'MUTE_OK';
  ref?: string;
  conversation: string;
  muted: boolean;
  /** ms since the epoch; null: for ever, or not muted. */
  muted_until: number | null;
}
export interface MuteChanged {
  type: 'MUTE_CHANGED';
  conversation: string;
  muted: boolean;
  muted_until: number | null;
}
/** DELETE_FOR_ME's answer: `message_id` for one message, `through` for a whole conversation. */
export interface DeleteOk {
  type: 'DELETE_OK';
  ref?: string;
  conversation: string;
  message_id?: string;
  through?: string;
}
export interface DeletedForMe {
  type: 'DELETED_FOR_ME';
  conversation: string;
  message_id?: string;
  through?: string;
}

export type PrivacyServerFrame = BlockOk | BlockChanged | BlocksList | MuteOk | MuteChanged | DeleteOk | DeletedForMe;

export type PrivacyClientFrame =
  | { type: 'BLOCK'; ref: string; user: string }
  | { type: 'UNBLOCK'; ref: string; user: string }
  | { type: 'BLOCKS'; ref: string }
  | { type: 'MUTE'; ref: string; conversation: string; until?: number }
  | { type: 'UNMUTE'; ref: string; conversation: string }
  | { type: 'DELETE_FOR_ME'; ref: string; conversation: string; message_id?: string };

export const PRIVACY_SERVER_TYPES = [
  'BLOCK_OK',
  'BLOCK_CHANGED',
  'BLOCKS_LIST',
  'MUTE_OK',
  'MUTE_CHANGED',
  'DELETE_OK',
  'DELETED_FOR_ME',
] as const;

/** A block changed: by this connection (`here`) or another device of the user (`elsewhere`). */
export interface BlockEvent {
  user: string;
  blocked: boolean;
  origin: 'here' | 'elsewhere';
}
/** A mute changed (`muted_until`: null for ever or not muted). */
export interface MuteEvent {
  conversation: string;
  muted: boolean;
  muted_until: number | null;
  origin: 'here' | 'elsewhere';
}
/** Messages were deleted for the user: one (`message_id`) or the conversation up to `through`. */
export interface DeleteEvent {
  conversation: string;
  message_id?: string;
  through?: string;
  origin: 'here' | 'elsewhere';
}

/** Whether a mute (MUTE_OK's or a list row's fields) holds at `now`: a mute is over at its `until`. */
export function isMuted(m: { muted?: boolean; muted_until?: number | null }, now = Date.now()): boolean {
  if (!m.muted) return false;
  return m.muted_until === null || m.muted_until === undefined || m.muted_until > now;
}
