// Groups (docs/protocol.md "Groups"): the frames of group membership, and the system entries a group's
// membership changes leave in its members' mailboxes. A group is the conversation `g:<group id>`; sending
// to it and paging its history are the ordinary SEND and HISTORY with that conversation.
import type { Entry } from './frames.js';

/** A member's role: `owner` (the creator, exactly one), `admin` (adds, removes, renames), `member`. */
export type GroupRole = 'owner' | 'admin' | 'member';

/** The membership operations, as named in GROUP_OK's `op` and in a system entry's `group_op`. */
export type GroupOpName = 'create' | 'add' | 'remove' | 'leave' | 'rename' | 'set_role';

/** The answer to a membership frame: the op is durable and applied (the next frame sees it). */
export interface GroupOk {
  type: 'GROUP_OK';
  ref?: string;
  op: GroupOpName;
  group: string;
  /** The op's own entry (its system entry in the members' mailboxes). */
  message_id: string;
}

export interface GroupSummary {
  group: string;
  name: string;
  role: GroupRole;
  /** How many current members. */
  members: number;
}

export interface GroupsList {
  type: 'GROUPS_LIST';
  ref?: string;
  /** The caller's current groups, sorted by id. */
  groups: GroupSummary[];
}

export interface GroupMember {
  user: string;
  role: GroupRole;
}

export interface GroupMembersList {
  type: 'GROUP_MEMBERS_LIST';
  ref?: string;
  group: string;
  name: string;
  /** Current members, sorted by user. */
  members: GroupMember[];
}

export type GroupServerFrame = GroupOk | GroupsList | GroupMembersList;

export type GroupClientFrame =
  | { type: 'GROUP_CREATE'; ref: string; name: string; members: string[] }
  | { type: 'GROUP_ADD'; ref: string; group: string; members: string[] }
  | { type: 'GROUP_REMOVE'; ref: string; group: string; members: string[] }
  | { type: 'GROUP_LEAVE'; ref: string; group: string }
  | { type: 'GROUP_RENAME'; ref: string; group: string; name: string }
  | { type: 'GROUP_ROLE'; ref: string; group: string; member: string; role: Exclude<GroupRole, 'owner'> }
  | { type: 'GROUPS'; ref: string }
  | { type: 'GROUP_MEMBERS'; ref: string; group: string };

/**
 * What a system entry says (its body, parsed). `op` is null when the body is not the JSON object the
 * protocol describes (an older or newer server, a corrupt row): then `text` is the body as it came.
 */
export interface GroupEvent {
  /** The entry itself (conversation, sender = who made the change, seq, message_id, ...). */
  entry: Entry;
  group: string;
  op: GroupOpName | null;
  /** Who made the change (the body's `by`, else the entry's sender). */
  by: string;
  /** The users added or removed (empty for other ops). */
  members: string[];
  /** The new name (rename, create), the new role (set_role). */
  name?: string;
  role?: string;
  /** For people: the body's `text`, or the raw body when it is not the expected JSON. */
  text: string;
}

const SYSTEM_PREFIX = '~group:';
const OPS = new Set<string>(['create', 'add', 'remove', 'leave', 'rename', 'set_role']);

/** Whether a conversation id is a group's (`g:<group id>`); false for anything that is not a string. */
export function isGroupConversation(conversation: unknown): boolean {
  return typeof conversation === 'string' && conversation.startsWith('g:') && conversation.length > 2;
}

/**
 * Whether a mailbox entry (or history message) is a group's system entry, not something a person said.
 * False for an object missing either field (e.g. a page's local copy of a message being sent).
 */
export function isGroupSystemEntry(e: { conversation?: unknown; client_msg_id?: unknown }): boolean {
  return isGroupConversation(e.conversation) && typeof e.client_msg_id === 'string' && e.client_msg_id.startsWith(SYSTEM_PREFIX);
}

/**
 * Reads a system entry's JSON body. Never throws: a body that does not parse, or is not an object with a
 * known `group_op`, gives `op: null` and the body as `text` (shown as text, as the protocol's `text` is).
 */
export function parseGroupEvent(entry: Entry): GroupEvent {
  const fallback: GroupEvent = {
    entry,
    group: entry.conversation,
    op: null,
    by: entry.sender,
    members: [],
    text: entry.body,
  };
  let v: unknown;
  try {
    v = JSON.parse(entry.body);
  } catch {
    return fallback;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return fallback;
  const o = v as Record<string, unknown>;
  if (typeof o.group_op !== 'string' || !OPS.has(o.group_op)) return fallback;
  const members = Array.isArray(o.members) ? o.members.filter((m): m is string => typeof m === 'string') : [];
  const event: GroupEvent = {
    entry,
    group: entry.conversation,
    op: o.group_op as GroupOpName,
    by: typeof o.by === 'string' ? o.by : entry.sender,
    members,
    text: typeof o.text === 'string' ? o.text : entry.body,
  };
  if (typeof o.name === 'string') event.name = o.name;
  if (typeof o.role === 'string') event.role = o.role;
  return event;
}
