// QimClient.attach(): ATTACH (with one client_upload_id per file), then the upload with the answer's method
// and headers, with progress, tried again (options.uploadAttempts, default 3) after a fresh ATTACH when the
// URL expired or the store refused it (403), or when the ATTACH itself was lost. The bytes go straight to the object store, never through the gateway (docs/protocol.md
// "Attachments"). Its own file so the client stays about the connection; not part of the public API.
import type { AttachInput, AttachmentRef, AttachOk, AttachOptions } from './attachments.js';
import { describeInput, HASH_MAX_BYTES, QimUploadError, sha256Hex, uploadOnce } from './attachments.js';
import { QimConnectionError, QimError, QimTimeoutError } from './errors.js';
import type { ClientFrame } from './frames.js';

/** What the flow needs of the client. */
export interface AttachHost {
  /** Resolves once online (rejects after the request timeout or on close). */
  ready(): Promise<void>;
  /** Sends the ATTACH (with a fresh ref) and resolves with ATTACH_OK, or rejects with the QimError. */
  request(frame: Omit<Extract<ClientFrame, { type: 'ATTACH' }>, 'ref'>): Promise<AttachOk>;
  /** Whether the client was closed (no more tries). */
  closed(): boolean;
  backoffDelay(attempt: number): number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function newUploadId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return `u-${c.randomUUID()}`;
  return `u-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/** An ATTACH that may answer if sent again: the connection or the server's load, not the declaration. */
function retryableRequest(e: unknown): boolean {
  return (e instanceof QimError && e.retryable) || e instanceof QimTimeoutError || e instanceof QimConnectionError;
}

export async function attachFile(host: AttachHost, conversation: string, file: AttachInput, options: AttachOptions): Promise<AttachmentRef> {
  const { name, contentType, size, body } = describeInput(file, options);
  const wantHash = options.sha256 ?? size <= HASH_MAX_BYTES;
  const sha256 = wantHash && size <= HASH_MAX_BYTES ? await sha256Hex(body) : null;
  const attempts = Math.max(1, options.uploadAttempts ?? 3);
  const progress = options.onProgress ?? (() => {});
  // One id for every ATTACH of this file: a repeat within the grant's validity is the same upload, charged once.
  const clientUploadId = options.clientUploadId ?? newUploadId();
  let ok: AttachOk | null = null;
  let last: Error = new Error('attach: not attempted');
  for (let attempt = 1; attempt <= attempts; attempt++) {
    // A fresh ATTACH for the first try, and when the URL is (nearly) expired or was refused.
    if (!ok || Date.now() >= ok.expires_at - 5_000) {
      const frame: Omit<Extract<ClientFrame, { type: 'ATTACH' }>, 'ref'> = {
        type: 'ATTACH',
        conversation,
        name,
        content_type: contentType,
        size,
        client_upload_id: clientUploadId,
      };
      if (sha256) frame.sha256 = sha256;
      try {
        await host.ready();
        ok = await host.request(frame);
      } catch (e) {
        // A lost answer or connection: the same ATTACH again (the same id: not charged twice).
        if (!retryableRequest(e) || host.closed() || attempt === attempts) throw e;
        last = e as Error;
        await sleep(host.backoffDelay(attempt - 1));
        continue;
      }
    }
    const current: AttachOk = ok;
    progress({ phase: 'start', loaded: 0, total: size, attempt, attachment: current.attachment });
    try {
      await uploadOnce(current, body, (loaded, total) =>
        progress({ phase: 'progress', loaded, total, attempt, attachment: current.attachment }),
      );
      progress({ phase: 'done', loaded: size, total: size, attempt, attachment: current.attachment });
      const ref: AttachmentRef = { attachment: current.attachment, name, content_type: contentType, size };
      if (sha256) ref.sha256 = sha256;
      return ref;
    } catch (e) {
      last = e as Error;
      if (host.closed()) throw e;
      // A refused signature (expired, or a clock off): the next try asks for a new URL.
      if (e instanceof QimUploadError && e.status === 403) ok = null;
      // Other 4xx will not change with a retry.
      else if (e instanceof QimUploadError && e.status !== undefined && e.status >= 400 && e.status < 500) throw e;
      if (attempt < attempts) {
        progress({ phase: 'retry', loaded: 0, total: size, attempt, attachment: current.attachment, error: last });
        await sleep(host.backoffDelay(attempt - 1));
      }
    }
  }
  throw last;
}
