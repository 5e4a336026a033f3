import { WebPushError } from '@qim/client';

// Call it from a click (browsers ask for permission on a user gesture); `qim` is a started QimClient.
// sw.js is the page's service worker: its `push` handler shows the notification (clients/web/sw.js).
export async function enableNotifications(qim) {
  if ((await Notification.requestPermission()) !== 'granted') return 'notifications are blocked';
  const registration = await navigator.serviceWorker.register('sw.js');
  await navigator.serviceWorker.ready;
  try {
    const { subscription } = await qim.enableWebPush(registration); // PUSH_CONFIG, subscribe, PUSH_REGISTER
    return `notifications on (${new URL(subscription.endpoint).host})`;
  } catch (e) {
    if (e instanceof WebPushError) return `no notifications: ${e.reason}: ${e.message}`;
    throw e; // the server refused the registration: a QimError (BAD_PUSH_TOKEN, TOO_MANY_DEVICES, ...)
  }
}
