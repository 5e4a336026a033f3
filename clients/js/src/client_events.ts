// What QimClient emits (`on(event, fn)`): the mailbox's entries, the connection's state and errors, the
// session's end, and the inbox's and the message changes' events (inbox_feed.ts, changes_feed.ts).
import type { Entry } from './frames.js';
import type { GroupEvent } from './groups.js';
import type { InboxEvents } from './inbox_feed.js';
import type { ChangesEvents } from './changes_feed.js';
import type { ConnectionState } from './client_options.js';

export interface ClientEvents extends InboxEvents, ChangesEvents {
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
  /**
   * The session was revoked (close 4001, or `session revoked:` at AUTH). The client does not connect with
   * that token again: with a token function it asks it once for a new one (a new login) and closes if it
   * gives the revoked one again; with a fixed token it closes.
   */
  revoked: { reason: string };
  /** The token expired (close 1008 "token expired at ..."): a token function is asked for a fresh one; a fixed token closes. */
  expired: { reason: string };
}
