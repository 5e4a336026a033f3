// The page's "Notifications" toggle: asks the browser's permission, registers the service worker (sw.js,
// which shows what the push role sends while the page is closed) and registers this browser's Web Push
// subscription with the server through the SDK (enableWebPush). Each way it can fail is said in words and
// changes nothing else: the chat goes on without notifications. A click on a notification opens the page
// on its conversation (sw.js: a message to an open page, or `?c=<conversation>` for a new one).
import { WebPushError } from './sdk/index.js';

const $ = (id) => document.getElementById(id);

// What the status line says per state (data-state: tests read it).
const TEXT = {
  pending: 'Turning notifications on…',
  on: 'Notifications are on: new messages show here while this page is closed.',
  off: 'Notifications are off.',
  unsupported:
    'This browser cannot show notifications from this page (it needs a browser with the Push API, and https or localhost).',
  denied: 'Notifications are blocked for this page: allow them in the browser’s site settings, then try again.',
  unavailable: 'This server does not send notifications (push is off there). The chat works as before.',
  failed:
    'This browser could not subscribe to its push service, so notifications cannot be turned on here. The chat works as before.',
};

let current = 'off';
let subscription = null;
// The tab's wish (sessionStorage, like its session and device name): a reload turns them on again by itself.
const WISH = 'qim.notifications';

function report(state, technical = '') {
  current = state;
  const p = $('push-state');
  p.dataset.state = state;
  p.textContent = TEXT[state];
  p.title = technical;
  p.hidden = state === 'off';
  const button = $('notifications');
  button.setAttribute('aria-pressed', String(state === 'on'));
  button.disabled = state === 'pending';
  if (technical) console.warn(`qim: notifications: ${technical}`);
}

async function enable(client) {
  if (!('serviceWorker' in navigator) || !('Notification' in window) || !('PushManager' in window))
    return report('unsupported');
  sessionStorage.setItem(WISH, 'on');
  report('pending');
  let registration;
  try {
    const permission = await Notification.requestPermission();
    if (permission !== 'granted') return report('denied', `permission ${permission}`);
    registration = await navigator.serviceWorker.register('sw.js');
    await navigator.serviceWorker.ready;
  } catch (e) {
    return report('unsupported', String(e?.message ?? e));
  }
  try {
    subscription = (await client.enableWebPush(registration)).subscription;
    report('on');
  } catch (e) {
    const technical = `${e?.name ?? 'Error'}: ${e?.message ?? e}`;
    if (e instanceof WebPushError) {
      const states = { unsupported: 'unsupported', permission: 'denied', server: 'unavailable', subscribe: 'failed' };
      return report(states[e.reason] ?? 'failed', technical);
    }
    report('failed', technical); // a refusal of the registration (BAD_PUSH_TOKEN, TOO_MANY_DEVICES) or the connection
  }
}

async function disable(client) {
  sessionStorage.removeItem(WISH);
  report('pending');
  try {
    await client.unregisterPush();
    await subscription?.unsubscribe();
    subscription = null;
    report('off');
  } catch (e) {
    report('on', `turning off: ${e?.message ?? e}`);
  }
}

/**
 * Wires the toggle for the signed-in `client()`; `open(id)` shows a conversation (a notification's click).
 */
export function initNotifications({ client, open }) {
  $('notifications').onclick = () => {
    const c = client();
    if (!c || current === 'pending') return;
    void (current === 'on' ? disable(c) : enable(c));
  };
  navigator.serviceWorker?.addEventListener('message', (ev) => {
    if (ev.data?.type === 'qim-open' && typeof ev.data.conversation === 'string') open(ev.data.conversation);
  });
}

/** Sign-out: the toggle is off, and a later sign-in in this tab does not turn it on by itself. */
export function resetNotifications() {
  subscription = null;
  sessionStorage.removeItem(WISH);
  report('off');
}

/**
 * A session started (sign-in or reload): off, unless this tab turned notifications on before a reload and
 * the permission still holds; then they are turned on again (the same device: the registration is
 * replaced, not added).
 */
export function resumeNotifications(client) {
  subscription = null;
  report('off');
  if (sessionStorage.getItem(WISH) === 'on' && globalThis.Notification?.permission === 'granted') void enable(client);
}

/** The conversation a notification's click asked for (`?c=`), taken off the address once read. */
export function conversationFromAddress() {
  const url = new URL(location.href);
  const c = url.searchParams.get('c');
  if (c === null) return null;
  url.searchParams.delete('c');
  history.replaceState(null, '', url.pathname + url.search + url.hash);
  return c;
}
