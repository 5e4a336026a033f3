// Typing and presence (docs/protocol.md "Typing and presence"): ephemeral signals, never stored. The
// frames, and the two small trackers QimClient keeps: who is typing where (each indicator expires by
// itself after the `expires_in_ms` the server gave, or ends with a stop, or with a message of that user
// in that conversation), and the last known presence of each user heard of.
import type { Entry } from './frames.js';

export type TypingState = 'start' | 'stop';

/** Pushed to the other members' live connections. */
export interface TypingFrame {
  type: 'TYPING';
  conversation: string;
  user: string;
  state: TypingState;
  /** How long the indicator shows without another TYPING (start only). */
  expires_in_ms?: number;
}

export type PresenceStatus = 'online' | 'offline';

export interface PresenceInfo {
  user: string;
  status: PresenceStatus;
  /** Milliseconds since the epoch when the user was last online; null while online or unknown (hidden). */
  last_seen: number | null;
}

/** PRESENCE_SUBSCRIBE's answer: the current state of each user asked for. */
export interface PresenceStateFrame {
  type: 'PRESENCE_STATE';
  ref?: string;
  users: PresenceInfo[];
}

/** Pushed on a change of a user the connection follows (its direct peers, its explicit subscriptions). */
export interface PresenceFrame extends PresenceInfo {
  type: 'PRESENCE';
}

export type SignalServerFrame = TypingFrame | PresenceStateFrame | PresenceFrame;

export type SignalClientFrame =
  | { type: 'TYPING'; conversation: string; state?: 'stop' }
  | { type: 'PRESENCE_SUBSCRIBE'; ref: string; users: string[] };

export const SIGNAL_SERVER_TYPES = ['TYPING', 'PRESENCE_STATE', 'PRESENCE'] as const;

/** A `typing` event: someone started or stopped (explicitly, by expiry, or by sending) typing. */
export interface TypingEvent {
  conversation: string;
  user: string;
  state: TypingState;
  /** start: when the indicator ends unless renewed (ms since the epoch, this machine's clock). */
  expiresAt?: number;
  /** stop: why. */
  reason?: 'stop' | 'expired' | 'message';
}

/** The server's expiry when a TYPING carries none (docs/protocol.md: a few seconds). */
const DEFAULT_EXPIRY_MS = 6000;

/** Who is typing in which conversation; `emit` gets every start and stop. */
export class TypingTracker {
  private readonly active = new Map<string, Map<string, { timer: ReturnType<typeof setTimeout>; expiresAt: number }>>();

  constructor(private readonly emit: (e: TypingEvent) => void) {}

  /** The users typing in a conversation now. */
  typing(conversation: string): string[] {
    return [...(this.active.get(conversation)?.keys() ?? [])];
  }

  onFrame(f: TypingFrame): void {
    if (f.state === 'stop') {
      this.end(f.conversation, f.user, 'stop');
      return;
    }
    const ms = typeof f.expires_in_ms === 'number' && f.expires_in_ms > 0 ? f.expires_in_ms : DEFAULT_EXPIRY_MS;
    let users = this.active.get(f.conversation);
    if (!users) this.active.set(f.conversation, (users = new Map()));
    const had = users.get(f.user);
    if (had) clearTimeout(had.timer);
    const expiresAt = Date.now() + ms;
    const timer = setTimeout(() => this.end(f.conversation, f.user, 'expired'), ms);
    (timer as { unref?: () => void }).unref?.(); // an indicator never keeps a Node process alive
    users.set(f.user, { timer, expiresAt });
    this.emit({ conversation: f.conversation, user: f.user, state: 'start', expiresAt });
  }

  /** A message of `entry.sender` ends their typing in that conversation. */
  onEntry(entry: Entry): void {
    this.end(entry.conversation, entry.sender, 'message');
  }

  /** Drops every indicator silently (the connection went: nothing is known any more). */
  clear(): void {
    for (const [conversation, users] of this.active) {
      for (const [user, t] of users) {
        clearTimeout(t.timer);
        this.emit({ conversation, user, state: 'stop', reason: 'expired' });
      }
    }
    this.active.clear();
  }

  private end(conversation: string, user: string, reason: 'stop' | 'expired' | 'message'): void {
    const users = this.active.get(conversation);
    const t = users?.get(user);
    if (!users || !t) return;
    clearTimeout(t.timer);
    users.delete(user);
    if (users.size === 0) this.active.delete(conversation);
    this.emit({ conversation, user, state: 'stop', reason });
  }
}

/**
 * What this client sends: a start at most once per `intervalMs` per conversation (the server rate-limits
 * TYPING per connection and conversation, and one start keeps the indicator up for its expiry), a stop only
 * after a start.
 */
export class TypingSender {
  private readonly lastStart = new Map<string, number>();

  constructor(private readonly intervalMs: number) {}

  /** Whether a frame should go out now for `state` in `conversation`. */
  shouldSend(conversation: string, state: TypingState, now = Date.now()): boolean {
    if (state === 'stop') return this.lastStart.delete(conversation);
    const last = this.lastStart.get(conversation);
    if (last !== undefined && now - last < this.intervalMs) return false;
    this.lastStart.set(conversation, now);
    return true;
  }

  /** A message sent in the conversation: it ends the others' indicator (TypingTracker.onEntry), so the next keystroke starts anew. */
  sent(conversation: string): void {
    this.lastStart.delete(conversation);
  }

  clear(): void {
    this.lastStart.clear();
  }
}
