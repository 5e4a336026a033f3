// Attachments (docs/protocol.md "Attachments"): the frames, the upload straight to the object store with the
// presigned URL ATTACH answers (the bytes never pass through the gateway), and the body the server writes
// for a message with attachments. QimClient.attach / sendFile / attachmentUrl use these.

/** The refusals of ATTACH, a SEND with attachments and ATTACHMENT_URL besides the common ones. */
export type AttachmentErrorCode =
  | 'ATTACHMENTS_DISABLED'
  | 'UNSUPPORTED_TYPE'
  | 'QUOTA_EXCEEDED'
  | 'ATTACHMENT_MISSING'
  | 'ATTACHMENT_MISMATCH'
  | 'UNKNOWN_ATTACHMENT';

/** ATTACH's answer: send `method` to `upload_url` with exactly `headers` and `size` bytes before `expires_at`. */
export interface AttachOk {
  type: 'ATTACH_OK';
  ref?: string;
  conversation: string;
  attachment: string;
  upload_url: string;
  method: string;
  headers: Record<string, string>;
  expires_at: number;
}

/** ATTACHMENT_URL's answer: a presigned GET of the object (or its thumbnail) valid until `expires_at`. */
export interface AttachmentUrlOk {
  type: 'ATTACHMENT_URL_OK';
  ref?: string;
  conversation: string;
  message_id: string;
  attachment: string;
  thumbnail: boolean;
  url: string;
  expires_at: number;
}

export type AttachmentServerFrame = AttachOk | AttachmentUrlOk;
export const ATTACHMENT_SERVER_TYPES = ['ATTACH_OK', 'ATTACHMENT_URL_OK'] as const;

/** One reference a SEND carries: as declared at ATTACH (`sha256` makes the server check the hash). */
export interface AttachmentRef {
  attachment: string;
  name: string;
  content_type: string;
  size: number;
  sha256?: string;
}

export type AttachmentClientFrame =
  | { type: 'ATTACH'; ref: string; conversation: string; name: string; content_type: string; size: number; sha256?: string; client_upload_id?: string }
  | { type: 'ATTACHMENT_URL'; ref: string; conversation: string; message_id: string; attachment: string; thumbnail: boolean };

/** One attachment of a stored message, as the server wrote it. */
export interface AttachmentInfo {
  attachment: string;
  kind: 'image' | 'file';
  name: string;
  content_type: string;
  size: number;
  /** The hash the sender declared (and the server checked), when there was one. */
  sha256?: string;
  /** Images whose thumbnail was made: their dimensions and `thumbnail: true`. */
  width?: number;
  height?: number;
  thumbnail?: boolean;
}

/** A message body with attachments: the caption (`text`, may be '') and the attachments. */
export interface AttachmentsBody {
  text: string;
  attachments: AttachmentInfo[];
}

/** The prefix of every server-written attachments body (a client's own body may not start like that). */
export const ATTACHMENTS_BODY_PREFIX = '{"qim":"attachments"';

/**
 * Reads a message body the server wrote for a SEND with attachments. Null for any other body (plain text),
 * and for one that does not parse; an entry with a malformed field is skipped. Never throws.
 */
export function parseAttachmentsBody(body: string): AttachmentsBody | null {
  if (typeof body !== 'string' || !body.startsWith(ATTACHMENTS_BODY_PREFIX)) return null;
  let o: Record<string, unknown>;
  try {
    const v = JSON.parse(body) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    o = v as Record<string, unknown>;
  } catch {
    return null;
  }
  if (o.qim !== 'attachments' || !Array.isArray(o.attachments)) return null;
  const attachments: AttachmentInfo[] = [];
  for (const a of o.attachments as unknown[]) {
    if (typeof a !== 'object' || a === null) continue;
    const r = a as Record<string, unknown>;
    if (typeof r.attachment !== 'string' || typeof r.name !== 'string' || typeof r.content_type !== 'string') continue;
    if (typeof r.size !== 'number') continue;
    const info: AttachmentInfo = {
      attachment: r.attachment,
      kind: r.kind === 'image' ? 'image' : 'file',
      name: r.name,
      content_type: r.content_type,
      size: r.size,
    };
    if (typeof r.sha256 === 'string') info.sha256 = r.sha256;
    if (typeof r.width === 'number') info.width = r.width;
    if (typeof r.height === 'number') info.height = r.height;
    if (r.thumbnail === true) info.thumbnail = true;
    attachments.push(info);
  }
  return { text: typeof o.text === 'string' ? o.text : '', attachments };
}

/**
 * A message's body after an edit (decision 152; docs/protocol.md "Editing and recalling"): an edit changes the
 * text, never the files. When `original` (the message's body as sent, or as HISTORY serves it) carries
 * attachments, the same attachments with the edit's text as caption; the edit's text is `edit` itself, or the
 * caption of an attachments body the server composed. Otherwise `edit` as it is. Never throws.
 */
export function editedBody(original: string, edit: string): string {
  if (typeof original !== 'string' || !original.startsWith(ATTACHMENTS_BODY_PREFIX)) return edit;
  let files: unknown;
  try {
    files = (JSON.parse(original) as { attachments?: unknown }).attachments;
  } catch {
    return edit;
  }
  if (!Array.isArray(files)) return edit;
  const text = parseAttachmentsBody(edit)?.text ?? edit;
  return JSON.stringify({ qim: 'attachments', text, attachments: files });
}

/** The text of a body: an attachments body's caption, else the body itself (what an edit starts from). */
export function captionOf(body: string): string {
  return parseAttachmentsBody(body)?.text ?? body;
}

/** A file to attach when there is no Blob (Node): its bytes with the name and type to declare. */
export interface FileBytes {
  name: string;
  type: string;
  size: number;
  bytes: Uint8Array;
}
/** A browser File or Blob (a Blob's name: options.name, else 'file'), or bytes with a name and type. */
export type AttachInput = Blob | FileBytes;

/**
 * Upload progress. `start` before each try, `progress` as bytes leave (browsers: XMLHttpRequest's upload
 * events; Node's fetch has none, so only start and done there), `retry` when a try failed and another
 * follows, `done` once the store took every byte.
 */
export interface UploadProgress {
  phase: 'start' | 'progress' | 'retry' | 'done';
  loaded: number;
  total: number;
  /** 1 for the first try. */
  attempt: number;
  attachment: string;
  /** For `retry`: why the try failed. */
  error?: Error;
}

export interface AttachOptions {
  /** The name to declare (default: the File's name, else 'file'). */
  name?: string;
  /** The content type to declare (default: the Blob's type, else application/octet-stream). */
  contentType?: string;
  /**
   * Declare the SHA-256 (the server then checks it at SEND). Default: when Web Crypto is here and the file
   * is at most 16 MiB (the server's limit for a hash).
   */
  sha256?: boolean;
  onProgress?: (p: UploadProgress) => void;
  /** How many upload tries (a failed upload is retried; a fresh ATTACH when the URL expired). Default 3. */
  uploadAttempts?: number;
  /**
   * The ATTACH's client_upload_id (default: a fresh random one per file). Every ATTACH of this file sends it,
   * so one repeated while the first grant is valid (a lost answer, a refused URL) answers the same
   * attachment and is charged once (docs/protocol.md, decision 161).
   */
  clientUploadId?: string;
}

/** The upload to the object store failed (after its retries): `status` is the store's HTTP status, if any. */
export class QimUploadError extends Error {
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'QimUploadError';
    this.status = status;
  }
}

export const HASH_MAX_BYTES = 16 * 1024 * 1024;

/** The name, type, size and body of an input. */
export function describeInput(file: AttachInput, options: AttachOptions): {
  name: string;
  contentType: string;
  size: number;
  body: Blob | Uint8Array;
} {
  if (isFileBytes(file)) {
    return {
      name: options.name ?? file.name,
      contentType: options.contentType ?? (file.type || 'application/octet-stream'),
      size: file.bytes.byteLength,
      body: file.bytes,
    };
  }
  const named = (file as { name?: unknown }).name;
  return {
    name: options.name ?? (typeof named === 'string' && named !== '' ? named : 'file'),
    contentType: options.contentType ?? (file.type || 'application/octet-stream'),
    size: file.size,
    body: file,
  };
}

function isFileBytes(f: AttachInput): f is FileBytes {
  return (f as FileBytes).bytes instanceof Uint8Array;
}

/** The lower-case hex SHA-256 of the body, or null without Web Crypto. */
export async function sha256Hex(body: Blob | Uint8Array): Promise<string | null> {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (!subtle) return null;
  const data = body instanceof Uint8Array ? body : new Uint8Array(await body.arrayBuffer());
  const digest = new Uint8Array(await subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

// Headers a browser will not let a page set (it sets them itself from the body: the same value, since the
// body is exactly `size` bytes).
const SET_BY_USER_AGENT = new Set(['content-length', 'host']);

/**
 * One upload try: `ok.method` to `ok.upload_url` with `ok.headers` and the body. XMLHttpRequest where there
 * is one (upload progress), else fetch. Rejects with QimUploadError (status for an HTTP refusal).
 */
export function uploadOnce(
  ok: AttachOk,
  body: Blob | Uint8Array,
  onBytes: (loaded: number, total: number) => void,
): Promise<void> {
  const XHR = (globalThis as { XMLHttpRequest?: new () => XMLHttpRequest }).XMLHttpRequest;
  if (XHR) {
    return new Promise((resolve, reject) => {
      const xhr = new XHR();
      xhr.open(ok.method, ok.upload_url);
      for (const [k, v] of Object.entries(ok.headers)) if (!SET_BY_USER_AGENT.has(k.toLowerCase())) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => onBytes(e.loaded, e.total);
      xhr.onload = () =>
        xhr.status >= 200 && xhr.status < 300
          ? resolve()
          : reject(new QimUploadError(`upload refused: HTTP ${xhr.status}`, xhr.status));
      xhr.onerror = () => reject(new QimUploadError('upload failed: network error'));
      xhr.ontimeout = () => reject(new QimUploadError('upload failed: timed out'));
      xhr.send(body as XMLHttpRequestBodyInit);
    });
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(ok.headers)) if (!SET_BY_USER_AGENT.has(k.toLowerCase())) headers[k] = v;
  return fetch(ok.upload_url, { method: ok.method, headers, body: body as BodyInit }).then(
    async (r) => {
      await r.arrayBuffer().catch(() => undefined);
      if (!r.ok) throw new QimUploadError(`upload refused: HTTP ${r.status}`, r.status);
    },
    (e: Error) => {
      throw new QimUploadError(`upload failed: ${e.message}`);
    },
  );
}
