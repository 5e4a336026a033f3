// The chat page's service worker: it shows the notifications the push role sends while the page is closed
// (docs/push.md "What is sent": JSON with conversation, sender, preview, count, badge, ...) and opens the
// page on the conversation when one is clicked. A classic worker (no modules: every browser with the Push
// API runs it); served beside index.html, so its scope is the page's directory.
//
// Tolerant of what arrives: a payload with fewer fields, more fields, or no JSON at all still shows a
// notification ("New message"), since the browser requires one for every push (userVisibleOnly) and a
// push with none shown may cost the site its permission.
'use strict';

const GENERIC = 'New message';

// The notification for one payload: title the sender (else the conversation), body the preview (or how
// many messages came), tag the conversation so a later push of it replaces this one.
function notificationFor(data) {
  const d = data && typeof data === 'object' ? data : {};
  const text = (v) => (typeof v === 'string' && v !== '' ? v : null);
  const conversation = text(d.conversation);
  const sender = text(d.sender);
  const count = Number.isInteger(d.count) && d.count > 1 ? d.count : 1;
  const title = sender ?? conversation ?? 'QIM chat';
  let body = text(d.preview) ?? (count > 1 ? `${count} new messages` : GENERIC);
  if (text(d.preview) && count > 1) body += ` (+${count - 1} more)`;
  return {
    title,
    options: {
      body,
      tag: conversation ?? 'qim',
      renotify: true, // a new burst of the same conversation alerts again, in place of the old one
      data: { conversation, message_id: text(d.message_id) },
      ...(Number.isInteger(d.server_time) ? { timestamp: d.server_time } : {}),
    },
  };
}

function payloadOf(event) {
  if (!event.data) return {};
  try {
    return event.data.json();
  } catch {
    const t = event.data.text();
    return t ? { preview: t } : {};
  }
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  const data = payloadOf(event);
  const { title, options } = notificationFor(data);
  const shown = self.registration.showNotification(title, options);
  const badge =
    Number.isInteger(data?.badge) && self.navigator.setAppBadge
      ? self.navigator.setAppBadge(data.badge).catch(() => {})
      : Promise.resolve();
  event.waitUntil(Promise.all([shown, badge]));
});

// A click opens the conversation: in a page already open (focused, told by a message) or in a new one
// (`?c=<conversation>`, which the page opens once signed in).
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const conversation = event.notification.data?.conversation ?? null;
  const url = new URL(conversation ? `./?c=${encodeURIComponent(conversation)}` : './', self.registration.scope).href;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const page = windows.find((w) => w.url.startsWith(self.registration.scope));
      if (page) {
        await page.focus();
        if (conversation) page.postMessage({ type: 'qim-open', conversation });
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});
