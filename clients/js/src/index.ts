// The QIM TypeScript client SDK: typed frames and errors, groups, the inbox (read state, unread counts, the
// conversation list, receipts), typing and presence, and QimClient (connection, client loop, sends).
export * from './frames.js';
export * from './errors.js';
export * from './groups.js';
export * from './inbox.js';
export * from './signals.js';
export type { ReadEvent, InboxEvents } from './inbox_feed.js';
export * from './client.js';
