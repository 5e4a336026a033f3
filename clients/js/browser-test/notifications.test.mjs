// Notifications on the web page (issue 40 item 6): the "Notifications" toggle asks the browser's permission
// (granted here through the DevTools protocol, Browser.grantPermissions) and registers the page's service
// worker (sw.js); the server of this test sends no Web Push, and a real subscription would need the browser
// vendor's push service, which cannot be reached here, so the page says so in words and the chat goes on.
// The worker is then found through the DevTools protocol (ServiceWorker.enable: its registrationId and
// origin), and push messages shaped like the push role's (docs/push.md "What is sent") are delivered to it
// with ServiceWorker.deliverPushMessage: each shows a notification (registration.getNotifications(): the
// sender as title, the preview as body, the conversation as tag), a second push of the same conversation
// replaces the first rather than adding one, another conversation adds one, and a payload with no fields
// or no JSON still shows a generic "New message". A notification's click opens its conversation: in an
// open page (the worker's message) and in a new one (`?c=`, shown once signed in). A reload turns them on
// again by itself; another tab (another device) leaves them off. And the SDK README's
// Web Push example (examples/web-push.mjs, held verbatim by the README) runs in the page as it is.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { user, waitFor } from '../test/qim.mjs';
import { WAIT, launch, openChat, pages, removeProfiles, screenshot, screenshots, send, signIn, startQim, waitForBodies, waitOnline } from './browser.mjs';

let qim;
let browser;
const origin = () => `http://127.0.0.1:${qim.port}`;

before(async () => {
  qim = await startQim();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await qim?.destroy();
  removeProfiles();
});

// The notifications the page's service worker shows now.
function notifications(page) {
  return page.evaluate(async () => {
    const reg = await navigator.serviceWorker.getRegistration();
    if (!reg) return null;
    return (await reg.getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
  });
}

async function waitForNotifications(page, what, pred, ms = WAIT) {
  let last = null;
  try {
    await waitFor(what, async () => pred((last = await notifications(page)) ?? []), ms);
  } catch (e) {
    throw new Error(`${e.message}; notifications: ${JSON.stringify(last)}`);
  }
  return last;
}

// Delivers `payload` to the worker until `pred` holds of its notifications. ServiceWorker.deliverPushMessage
// is not acknowledged: Chromium drops the event silently when the worker cannot take it then (seen once in
// a few runs on a loaded machine), so it is delivered again after a bound, 4 times at most. Every payload
// here is tagged, so a second delivery replaces its notification and never changes what is asserted.
async function deliverUntil(deliver, page, payload, what, pred) {
  for (let attempt = 1; ; attempt++) {
    await deliver(payload);
    try {
      return await waitForNotifications(page, what, pred, WAIT / 4);
    } catch (e) {
      if (attempt === 4) throw e;
      console.log(`browser test: ${what}: not shown after delivery ${attempt}, delivering again`);
    }
  }
}

test('the page registers its service worker, says plainly that push is not available, and shows pushed notifications collapsed per conversation', async () => {
  const alice = user('alice'), bob = user('bob'), carol = user('carol');
  const ctx = await browser.createBrowserContext();
  try {
    await ctx.overridePermissions(origin(), ['notifications']); // Browser.grantPermissions
    const page = await signIn(ctx, 'alice', alice, origin());

    // The DevTools protocol's view of the page's service workers, from before the page registers one.
    const cdp = await page.createCDPSession();
    const registrations = new Map();
    const versions = new Map();
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations: rs }) => {
      for (const r of rs) registrations.set(r.registrationId, r);
    });
    cdp.on('ServiceWorker.workerVersionUpdated', ({ versions: vs }) => {
      for (const v of vs) versions.set(v.versionId, v);
    });
    await cdp.send('ServiceWorker.enable');

    await page.click('[data-testid=notifications]');
    await page.waitForFunction(
      () => !['off', 'pending'].includes(document.querySelector('[data-testid=push-state]').dataset.state),
      { timeout: WAIT },
    );
    const said = await page.$eval('[data-testid=push-state]', (p) => ({ state: p.dataset.state, text: p.textContent, hidden: p.hidden }));
    // This server sends no Web Push (a server before push: UNKNOWN_TYPE; push off: no providers), so the page
    // says so; a server with push on would get as far as the browser's push service, unreachable here.
    assert.ok(['unavailable', 'failed'].includes(said.state), JSON.stringify(said));
    assert.equal(said.hidden, false);
    assert.match(said.text, /The chat works as before\./);
    await screenshot(page, 'web-notifications-unavailable');

    // The worker the page registered: its registration (scope: the page's directory) and a running version.
    let worker = null;
    await waitFor('the page\u2019s service worker, activated', () => {
      const reg = [...registrations.values()].find((r) => r.scopeURL === `${origin()}/` && !r.isDeleted);
      const active = reg && [...versions.values()].find((v) => v.registrationId === reg.registrationId && v.status === 'activated');
      if (active) worker = { registrationId: reg.registrationId, scriptURL: active.scriptURL };
      return Boolean(active);
    }, WAIT);
    assert.equal(worker.scriptURL, `${origin()}/sw.js`);
    const deliver = (payload) =>
      cdp.send('ServiceWorker.deliverPushMessage', {
        origin: origin(),
        registrationId: worker.registrationId,
        data: typeof payload === 'string' ? payload : JSON.stringify(payload),
      });

    // A push as the push role sends it (docs/push.md): one notification, the sender, the preview, the conversation.
    const ab = `d:${[alice, bob].sort().join(':')}`;
    const first = { type: 'message', conversation: ab, message_id: '281474976710721', sender: bob, preview: 'see you at 8', count: 1, badge: 1, server_time: Date.now() };
    let shown = await deliverUntil(deliver, page, first, 'the first notification', (ns) => ns.length === 1);
    assert.deepEqual(
      { title: shown[0].title, body: shown[0].body, tag: shown[0].tag, conversation: shown[0].data?.conversation },
      { title: bob, body: 'see you at 8', tag: ab, conversation: ab },
    );

    // The same conversation again (a later burst): it replaces the first, it does not add one.
    const later = { type: 'message', conversation: ab, message_id: '281474976710722', sender: bob, preview: 'or at 9?', count: 3, badge: 1 };
    shown = await deliverUntil(deliver, page, later, 'the replaced notification', (ns) => ns.some((n) => n.body.startsWith('or at 9?')));
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.deepEqual({ title: shown[0].title, body: shown[0].body, tag: shown[0].tag }, { title: bob, body: 'or at 9? (+2 more)', tag: ab });

    // Another conversation adds one; no preview (a deployment sending no text): a generic body.
    const ac = `d:${[alice, carol].sort().join(':')}`;
    const other = { type: 'message', conversation: ac, sender: carol, preview: '', count: 1 };
    shown = await deliverUntil(deliver, page, other, 'a second conversation\u2019s notification', (ns) => ns.length === 2);
    const second = shown.find((n) => n.tag === ac);
    assert.deepEqual({ title: second.title, body: second.body }, { title: carol, body: 'New message' });

    // Tolerant of what arrives: no fields, or no JSON at all, still shows a notification.
    shown = await deliverUntil(deliver, page, {}, 'a notification for an empty payload', (ns) => ns.some((n) => n.tag === 'qim'));
    assert.equal(shown.length, 3, JSON.stringify(shown));
    assert.deepEqual(
      (({ title, body }) => ({ title, body }))(shown.find((n) => n.tag === 'qim')),
      { title: 'QIM chat', body: 'New message' },
    );
    shown = await deliverUntil(deliver, page, 'not json', 'a notification for a payload that is no JSON', (ns) =>
      ns.some((n) => n.body === 'not json'),
    );
    assert.equal(shown.length, 3, JSON.stringify(shown)); // the same tag as the empty one's: replaced
    assert.equal(shown.find((n) => n.tag === 'qim').title, 'QIM chat');

    // The chat goes on as before.
    await openChat(page, bob);
    await send(page, 'still chatting');
    await waitForBodies(page, ['still chatting']);

    // A reload of the tab turns them on again by itself (the tab asked for them): the same outcome, no click.
    await page.reload({ waitUntil: 'load' });
    await waitOnline(page);
    await page.waitForFunction(
      (want) => document.querySelector('[data-testid=push-state]').dataset.state === want,
      { timeout: WAIT },
      said.state,
    );

    // A click in an open page: the worker tells it the conversation (its message event), and it opens it.
    await page.evaluate((c) => navigator.serviceWorker.dispatchEvent(new MessageEvent('message', { data: { type: 'qim-open', conversation: c } })), ac);
    await page.waitForFunction((p) => document.querySelector('[data-testid=chat-title]')?.textContent === p, { timeout: WAIT }, carol);

    // A click with no page open opens `?c=<conversation>`: shown once signed in, and taken off the address.
    const fresh = await ctx.newPage();
    pages.set('alice-new', fresh);
    await fresh.goto(`${origin()}/?c=${encodeURIComponent(ab)}`, { waitUntil: 'load' });
    await fresh.type('#user', alice);
    await fresh.click('#signin button[type=submit]');
    await fresh.waitForFunction((p) => document.querySelector('[data-testid=chat-title]')?.textContent === p, { timeout: WAIT }, bob);
    assert.equal(await fresh.evaluate(() => location.search), '');
    // Another tab is another device: it did not ask for notifications, so they stay off there.
    await waitOnline(fresh);
    assert.equal(await fresh.$eval('[data-testid=push-state]', (p) => p.dataset.state), 'off');
  } catch (e) {
    await screenshots('notifications');
    throw e;
  } finally {
    pages.clear();
    await ctx.close();
  }
});

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'web-push.mjs');

test('the README\u2019s Web Push example runs in a page: permission, the service worker, PUSH_CONFIG, and a WebPushError naming why not', async () => {
  const example = readFileSync(EXAMPLE, 'utf8');
  const readme = readFileSync(join(dirname(EXAMPLE), '..', 'README.md'), 'utf8');
  assert.ok(readme.includes(example), 'README.md must hold examples/web-push.mjs');
  const ctx = await browser.createBrowserContext();
  try {
    await ctx.overridePermissions(origin(), ['notifications']);
    const page = await ctx.newPage();
    pages.set('example', page);
    // The example as a page would serve it: '@qim/client' is the page's copy of the SDK.
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      if (new URL(r.url()).pathname !== '/examples/web-push.mjs') return void r.continue();
      void r.respond({ status: 200, contentType: 'text/javascript', body: example.replace("'@qim/client'", "'/sdk/index.js'") });
    });
    await page.goto(`${origin()}/`, { waitUntil: 'load' });
    const said = await page.evaluate(async (name) => {
      const { QimClient } = await import('/sdk/index.js');
      const { enableNotifications } = await import('/examples/web-push.mjs');
      const { token } = await (await fetch(`/dev/token?user=${name}&device=example`)).json();
      const qim = new QimClient({ url: `ws://${location.host}/`, token });
      await qim.start();
      try {
        return await enableNotifications(qim);
      } finally {
        qim.close();
      }
    }, user('dora'));
    // This server sends no Web Push: the example says why, in one line.
    assert.match(said, /^no notifications: server: this server does not (offer push notifications|send Web Push notifications)/);
    const scope = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.scope);
    assert.equal(scope, `${origin()}/`);
  } catch (e) {
    await screenshots('notifications-example');
    throw e;
  } finally {
    pages.clear();
    await ctx.close();
  }
});
