// Reactions (docs/protocol.md "Reactions", decision 124): the frames, and the part of the message-state fold
// that aggregates them (decision 145). A reaction event entry carries `count`, how many users hold that
// emoji right after it, so the newest event per emoji (by position: message ids rise within a conversation)
// gives its count whatever order the events came in; `mine` is the newest of the reader's own events per
// emoji. HISTORY's aggregate is the base, counted up to a position the caller gives (`through`): events at
// or below it are in the base already and change nothing, so a late push never rolls a page back.

import type { EventAck } from './lifecycle.js';

/** One emoji's reactions on a message as HISTORY serves them and the fold gives them. */
export interface Reaction {
  emoji: string;
  /** How many users hold it (a removed member's count too). */
  count: number;
  /** Whether the reader holds it. */
  mine: boolean;
}

/** REACT's answer: `message_id` is the event's own id, `target` the message reacted to. */
export type ReactAck = EventAck<'REACT_ACK'>;

/** UNREACT's answer. */
export type UnreactAck = EventAck<'UNREACT_ACK'>;

export type ReactionServerFrame = ReactAck | UnreactAck;

export type ReactionClientFrame =
  | { type: 'REACT'; ref: string; client_msg_id: string; conversation: string; message_id: string; emoji: string }
  | { type: 'UNREACT'; ref: string; client_msg_id: string; conversation: string; message_id: string; emoji: string };

export const REACTION_SERVER_TYPES = ['REACT_ACK', 'UNREACT_ACK'] as const;

/** The refusals of REACT and UNREACT besides the common ones and UNKNOWN_MESSAGE, MESSAGE_RECALLED. */
export type ReactionErrorCode = 'BAD_REACTION' | 'REACTION_LIMIT' | 'REACTION_UNCHANGED';

/** The client_msg_ids of the reaction event entries (system entries: never unread). */
export const REACT_ENTRY_ID = '~react';
export const UNREACT_ENTRY_ID = '~unreact';

/** What the fold needs of a reaction event. */
export interface ReactionFact {
  kind: 'react' | 'unreact';
  /** The event entry's own message id: its position in the conversation. */
  event_id: string;
  by: string;
  emoji: string;
  /** How many users hold `emoji` right after the event. */
  count: number;
}

function position(id: string | undefined): bigint | null {
  return typeof id === 'string' && /^[0-9]+$/.test(id) ? BigInt(id) : null;
}

/**
 * A message's reactions: `base` (HISTORY's aggregate, counted through position `through`; none for a
 * message as sent) and the reaction events, in any order, with duplicates. `me`: the reader (without it,
 * `mine` comes from the base only). Emojis keep the order they were first added; a count of 0 is dropped.
 */
export function foldReactions(
  base: readonly Reaction[] | undefined,
  events: Iterable<ReactionFact>,
  me: string | null = null,
  through?: string,
): Reaction[] {
  const after = position(through);
  const byId = new Map<string, ReactionFact>();
  for (const ev of events) {
    const at = position(ev.event_id);
    if (at === null || (after !== null && at <= after)) continue; // counted by the base
    byId.set(ev.event_id, ev); // a duplicate is the same fact
  }
  const facts = [...byId.values()].sort((a, b) => {
    const d = BigInt(a.event_id) - BigInt(b.event_id);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  });
  const now = new Map<string, Reaction>(); // insertion order: first added
  for (const r of base ?? []) now.set(r.emoji, { emoji: r.emoji, count: r.count, mine: r.mine });
  for (const f of facts) {
    let r = now.get(f.emoji);
    if (!r) now.set(f.emoji, (r = { emoji: f.emoji, count: 0, mine: false }));
    r.count = f.count;
    if (me !== null && f.by === me) r.mine = f.kind === 'react';
  }
  return [...now.values()].filter((r) => r.count > 0).map((r) => ({ ...r }));
}

/** Whether two reaction lists say the same (same emojis in the same order, counts and mine). */
export function sameReactions(a: readonly Reaction[], b: readonly Reaction[]): boolean {
  return a.length === b.length && a.every((r, i) => r.emoji === b[i].emoji && r.count === b[i].count && r.mine === b[i].mine);
}
