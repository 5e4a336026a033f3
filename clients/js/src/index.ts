// The QIM TypeScript client SDK: typed frames and errors, groups, and QimClient (connection, client loop, sends).
export * from './frames.js';
export * from './errors.js';
export * from './groups.js';
export * from './client.js';
