// Offline push (docs/protocol.md "Push", docs/push.md): the frames a device uses to say where it is woken
// when it has no live connection, and the browser's part of Web Push: PUSH_CONFIG for the VAPID key, a
// PushSubscription made with it, PUSH_REGISTER with the subscription's JSON. What the push role then sends
// a service worker is `PushPayload` (clients/web/sw.js shows it).

/** The push services a device can register with. */
export type PushProvider = 'fcm' | 'apns' | 'webpush';

/** PUSH_REGISTER's refusals besides the common ones (INVALID_ARGUMENT, UNAVAILABLE). */
export type PushErrorCode = 'UNKNOWN_PROVIDER' | 'BAD_PUSH_TOKEN' | 'TOO_MANY_DEVICES';

/** What the deployment sends through (`providers`: [] when push is off) and its VAPID key (base64url). */
export interface PushConfig {
  type: 'PUSH_CONFIG';
  ref?: string;
  providers: PushProvider[];
  vapid_public_key: string | null;
}
export interface PushRegistered {
  type: 'PUSH_REGISTERED';
  ref?: string;
  provider: PushProvider;
}
export interface PushUnregistered {
  type: 'PUSH_UNREGISTERED';
  ref?: string;
}

export type PushServerFrame = PushConfig | PushRegistered | PushUnregistered;

export type PushClientFrame =
  | { type: 'PUSH_CONFIG'; ref: string }
  | { type: 'PUSH_REGISTER'; ref: string; provider: PushProvider; token: string }
  | { type: 'PUSH_UNREGISTER'; ref: string };

export const PUSH_SERVER_TYPES = ['PUSH_CONFIG', 'PUSH_REGISTERED', 'PUSH_UNREGISTERED'] as const;

/**
 * The JSON the push role sends (docs/push.md "What is sent"): the latest message of a collapsed burst.
 * Every field is optional to a reader: a service worker shows what is there (an older or newer server may
 * send fewer or more).
 */
export interface PushPayload {
  type?: 'message' | string;
  conversation?: string;
  message_id?: string;
  sender?: string;
  /** The body's first bytes ('' when the deployment sends no text). */
  preview?: string;
  /** Messages in the burst. */
  count?: number;
  /** The user's unread conversations (muted ones left out). */
  badge?: number;
  server_time?: number;
}

/**
 * Why enableWebPush() could not register this browser: `unsupported` (no Push API here), `permission`
 * (the user or the browser refused notifications), `server` (the server sends no Web Push: push off, no
 * VAPID key, or a server before push), `subscribe` (the browser's push service refused or cannot be
 * reached). Refusals of PUSH_REGISTER itself stay QimErrors (BAD_PUSH_TOKEN, TOO_MANY_DEVICES, ...).
 */
export type WebPushFailure = 'unsupported' | 'permission' | 'server' | 'subscribe';

export class WebPushError extends Error {
  readonly reason: WebPushFailure;
  constructor(reason: WebPushFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebPushError';
    this.reason = reason;
  }
}

/** The parts of a ServiceWorkerRegistration enableWebPush() uses (browsers' and test doubles). */
export interface PushRegistrationLike {
  pushManager?: {
    getSubscription(): Promise<PushSubscriptionLike | null>;
    subscribe(options: { userVisibleOnly: boolean; applicationServerKey: Uint8Array }): Promise<PushSubscriptionLike>;
  };
}
export interface PushSubscriptionLike {
  readonly endpoint: string;
  readonly options?: { applicationServerKey?: ArrayBuffer | null };
  toJSON(): unknown;
  unsubscribe(): Promise<boolean>;
}

/** What enableWebPush() made: the browser's subscription and the server's answer. */
export interface WebPushRegistration {
  subscription: PushSubscriptionLike;
  registered: PushRegistered;
}

/** The requests enableWebPush() makes (QimClient's pushConfig and registerPush). */
export interface PushDoor {
  pushConfig(): Promise<PushConfig>;
  registerPush(provider: PushProvider, token: string): Promise<PushRegistered>;
}

/** Decodes base64url (no padding needed) into bytes: the form of the VAPID key PUSH_CONFIG gives. */
export function base64UrlToBytes(text: string): Uint8Array {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(text.length / 4) * 4, '=');
  const raw = atob(b64);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function sameBytes(a: ArrayBuffer | null | undefined, b: Uint8Array): boolean {
  if (!a) return false;
  const x = new Uint8Array(a);
  return x.length === b.length && x.every((v, i) => v === b[i]);
}

function errorName(e: unknown): string {
  return (e as { name?: string } | null)?.name ?? '';
}

/**
 * Registers this browser for Web Push: asks PUSH_CONFIG for the VAPID key, subscribes `registration`'s
 * PushManager with it (`userVisibleOnly`: every push shows a notification), and sends PUSH_REGISTER with
 * the subscription's JSON. A subscription made with another key (the server's key changed) is dropped and
 * made again. Asks for notification permission if the page did not (call it from a user gesture).
 * Rejects with WebPushError (see WebPushFailure) or the server's QimError.
 */
export async function enableWebPush(door: PushDoor, registration: PushRegistrationLike): Promise<WebPushRegistration> {
  const manager = registration?.pushManager;
  if (!manager) throw new WebPushError('unsupported', 'this browser has no Push API (PushManager)');
  let config: PushConfig;
  try {
    config = await door.pushConfig();
  } catch (e) {
    // A server from before push does not know the frame: it offers no push, like a server with push off.
    if ((e as { code?: string }).code === 'UNKNOWN_TYPE')
      throw new WebPushError('server', 'this server does not offer push notifications', { cause: e });
    throw e;
  }
  if (!config.providers.includes('webpush') || !config.vapid_public_key)
    throw new WebPushError('server', 'this server does not send Web Push notifications (push is off)');
  const key = base64UrlToBytes(config.vapid_public_key);
  let subscription: PushSubscriptionLike;
  try {
    const existing = await manager.getSubscription();
    if (existing && !sameBytes(existing.options?.applicationServerKey, key)) await existing.unsubscribe();
    subscription =
      existing && sameBytes(existing.options?.applicationServerKey, key)
        ? existing
        : await manager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    if (errorName(e) === 'NotAllowedError')
      throw new WebPushError('permission', `notifications are not allowed: ${message}`, { cause: e });
    throw new WebPushError('subscribe', `the browser's push service refused the subscription: ${message}`, { cause: e });
  }
  const registered = await door.registerPush('webpush', JSON.stringify(subscription));
  return { subscription, registered };
}
