// The QIM TypeScript client SDK: typed frames and errors, groups, the inbox (read state, unread counts, the
// conversation list, receipts), typing and presence, editing, recalling and reactions (the message-state fold), replies, blocking,
// muting and delete for me, offline push (Web Push in the browser), attachments (upload to the object store), and QimClient (connection, client loop, sends).
export * from './frames.js';
export * from './errors.js';
export * from './groups.js';
export * from './inbox.js';
export * from './signals.js';
export * from './lifecycle.js';
export * from './reactions.js';
export * from './privacy.js';
export * from './push.js';
export * from './attachments.js';
export type { ReadEvent, InboxEvents } from './inbox_feed.js';
export * from './client.js';
