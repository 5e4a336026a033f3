// The QIM TypeScript client SDK: typed frames and errors, and QimClient (connection, client loop, sends).
export * from './frames.js';
export * from './errors.js';
export * from './client.js';
