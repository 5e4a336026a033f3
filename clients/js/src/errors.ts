// Typed errors: what the server refused (with the protocol's code) and what the transport did.
import type { ErrorCode } from './frames.js';

/** The server answered a request with ERROR: `code` is stable, `message` is for people. */
export class QimError extends Error {
  readonly code: ErrorCode;
  readonly ref?: string;
  constructor(code: ErrorCode, message: string, ref?: string) {
    super(`${code}: ${message}`);
    this.name = 'QimError';
    this.code = code;
    this.ref = ref;
  }
  /** Whether retrying the same request later may succeed (UNAVAILABLE, RATE_LIMITED). */
  get retryable(): boolean {
    return this.code === 'UNAVAILABLE' || this.code === 'RATE_LIMITED';
  }
}

/**
 * The server refused the token (UNAUTHENTICATED: malformed, expired, or signed with another secret, e.g.
 * minted for another data directory). A QimError too; `start()` rejects with it and a fixed token stops the
 * client.
 */
export class QimAuthError extends QimError {
  constructor(message: string, ref?: string) {
    super('UNAUTHENTICATED', message, ref);
    this.name = 'QimAuthError';
  }
}

/** No answer within the request timeout. The request may or may not have reached the server. */
export class QimTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what}: no answer within ${ms} ms`);
    this.name = 'QimTimeoutError';
  }
}

/** The connection closed (or could not be made) before the answer came. */
export class QimConnectionError extends Error {
  readonly closeCode?: number;
  readonly closeReason?: string;
  constructor(message: string, closeCode?: number, closeReason?: string) {
    super(message);
    this.name = 'QimConnectionError';
    this.closeCode = closeCode;
    this.closeReason = closeReason;
  }
}
