// The signed-in session of this tab, in sessionStorage: it survives a reload of the tab (and only of
// this tab: closing it signs out, another tab signs in on its own), and "Sign out" forgets it. It holds
// the user, the device name of this tab and the last development token with its expiry; the token is
// reused until a minute before it expires or until the server refuses it, then a fresh one is fetched.
import { tokenRefusal } from './text.js';

const KEY = 'qim.session';
const OPEN_KEY = 'qim.open';
const MARGIN_MS = 60_000;

/** The stored session ({ user, device, token, expires_at }) or null. */
export function storedSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    return s && typeof s.user === 'string' && typeof s.device === 'string' ? s : null;
  } catch {
    return null;
  }
}

function save(s) {
  sessionStorage.setItem(KEY, JSON.stringify(s));
}

/** Forgets the session and the conversation shown (sign out). The device name of the tab stays. */
export function forgetSession() {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(OPEN_KEY);
}

/** The device name of this tab: kept for the tab's life, so a reload is the same device. */
export function tabDevice() {
  let device = sessionStorage.getItem('qim.device');
  if (!device) {
    device = `web-${Math.random().toString(36).slice(2, 10)}`;
    sessionStorage.setItem('qim.device', device);
  }
  return device;
}

/** An Error whose message is for people (the page shows it as is). */
export class SignInError extends Error {}

/** Fetches a development token for user@device and stores it as the session; throws SignInError. */
export async function fetchToken(user, device) {
  let r;
  try {
    r = await fetch(`/dev/token?user=${encodeURIComponent(user)}&device=${encodeURIComponent(device)}`);
  } catch (e) {
    console.warn('qim: token:', e);
    throw new SignInError(`Cannot reach the server at ${location.host}. Is it running?`);
  }
  if (!r.ok) {
    console.warn(`qim: token: HTTP ${r.status}`, (await r.text()).trim());
    throw new SignInError(tokenRefusal(r.status, user));
  }
  const body = await r.json();
  save({ user, device, token: body.token, expires_at: body.expires_at });
  return body.token;
}

/**
 * The token function for the client: the stored token while it is valid for another minute and was not
 * refused (`refused()` says the server refused the last one), else a fresh one.
 */
export function tokenSource(user, device, refused) {
  return async () => {
    const s = storedSession();
    if (s?.token && s.user === user && !refused() && s.expires_at - Date.now() > MARGIN_MS) return s.token;
    return fetchToken(user, device);
  };
}

/** Whether the stored session has a token (a reload signs in with it, without a request). */
export function hasStoredToken() {
  return Boolean(storedSession()?.token);
}

/** Drops the stored token (it was refused) but keeps who is signed in. */
export function dropToken() {
  const s = storedSession();
  if (s) save({ user: s.user, device: s.device });
}

/** The conversation shown, restored after a reload. */
export function rememberOpen(id) {
  if (id) sessionStorage.setItem(OPEN_KEY, id);
  else sessionStorage.removeItem(OPEN_KEY);
}
export function rememberedOpen() {
  return sessionStorage.getItem(OPEN_KEY);
}
