// The inbox on the web page (issue 38, item 8): two browser contexts of one user (two devices: each its own
// sessionStorage, so its own device name) and one of another, against a real `qim up`. The unread badge
// comes from the server on both of bob's devices; read on one, it goes on the other (READ, READ_STATE) and
// stays gone after a reload (the count is the server's, not the browser's); alice sees "delivered" (the
// peer's mailbox holds it: DELIVERED), then "seen" (RECEIPT); typing shows on the other side and ends with
// the message; alice sees bob's online dot (presence). Screenshots on failure under QIM_BROWSER_ARTIFACTS.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { user } from '../test/qim.mjs';
import {
  WAIT,
  clickListItem,
  conversationItem,
  launch,
  openChat,
  pages,
  removeProfiles,
  screenshot,
  screenshots,
  send,
  signIn,
  startQim,
  waitForBodies,
  waitForUnread,
  waitOnline,
} from './browser.mjs';

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

// The delivery states of one's own messages in the chat shown, in order.
function states(page) {
  return page.$$eval('[data-testid=message].mine', (ms) => ms.map((m) => m.dataset.state));
}

function waitForStates(page, want) {
  return page.waitForFunction(
    (w) => JSON.stringify([...document.querySelectorAll('[data-testid=message].mine')].map((m) => m.dataset.state)) === JSON.stringify(w),
    { timeout: WAIT },
    want,
  );
}

function typingShown(page) {
  return page.$eval('[data-testid=typing]', (t) => (t.hidden ? '' : t.textContent));
}

test('two devices of bob and alice: unread from the server, read on one device clears the other, delivered, seen, typing, online', async (t) => {
  const alice = user('alice');
  const bob = user('bob');
  const ctxA = await browser.createBrowserContext();
  const ctxB1 = await browser.createBrowserContext();
  const ctxB2 = await browser.createBrowserContext();
  try {
    const a = await signIn(ctxA, 'alice', alice, origin());
    const b1 = await signIn(ctxB1, 'bob-laptop', bob, origin());
    const b2 = await signIn(ctxB2, 'bob-phone', bob, origin());

    await openChat(a, bob);
    // Bob is online (two devices): his dot on the chat's avatar, "Online" under his name.
    await a.waitForSelector('#chat-avatar [data-testid=presence][data-status=online]', { timeout: WAIT });
    assert.equal(await a.$eval('#chat-subtitle', (s) => s.textContent), 'Online');

    await send(a, 'one');
    await send(a, 'two');
    // Bob's mailbox holds both: "delivered" (DELIVERED), not yet seen.
    await waitForStates(a, ['delivered', 'delivered']);
    assert.equal(await a.$('[data-testid=seen]'), null);

    // The badge on both of bob's devices, from the server's count.
    await waitForUnread(b1, alice, '2');
    await waitForUnread(b2, alice, '2');
    await b2.waitForFunction(() => document.title === '(2) QIM chat', { timeout: WAIT });
    await screenshot(b2, 'web-inbox-unread');

    // Read on the laptop: the phone's badge goes, and alice sees "Seen".
    await clickListItem(b1, conversationItem(alice));
    await waitForBodies(b1, ['one', 'two']);
    await waitForUnread(b1, alice, '');
    await waitForUnread(b2, alice, '');
    await b2.waitForFunction(() => document.title === 'QIM chat', { timeout: WAIT });
    await waitForStates(a, ['seen', 'seen']);
    await a.waitForSelector('[data-testid=message].mine:last-of-type [data-testid=seen]', { timeout: WAIT });
    await screenshot(a, 'web-inbox-seen');

    // The phone reloaded: still read (the count is the server's, not this browser's).
    await b2.reload({ waitUntil: 'load' });
    await waitOnline(b2);
    await b2.waitForSelector(conversationItem(alice), { timeout: WAIT });
    await waitForUnread(b2, alice, '');

    // Bob types on the laptop: alice sees it in the chat and in her list; his message ends it.
    assert.equal(await typingShown(a), '');
    await b1.type('[data-testid=body]', 'thr');
    await a.waitForFunction(() => !document.querySelector('[data-testid=typing]').hidden, { timeout: WAIT });
    assert.match(await typingShown(a), new RegExp(`^${bob} is typing`));
    assert.equal(await a.$eval(`${conversationItem(bob)} .preview`, (p) => p.textContent), 'typing…');
    await screenshot(a, 'web-inbox-typing');
    await b1.type('[data-testid=body]', 'ee');
    await b1.click('[data-testid=send]');
    await waitForBodies(a, ['three']);
    await a.waitForFunction(() => document.querySelector('[data-testid=typing]').hidden, { timeout: WAIT });

    // Alice has the chat open and visible: bob's message is read at once, on her side no badge, and
    // bob's "three" says seen.
    await waitForUnread(a, bob, '');
    await waitForStates(b1, ['seen']);

    // A new message while the laptop shows the chat: read there, so the phone shows no badge for it.
    await send(a, 'four');
    await waitForBodies(b1, ['four']);
    await waitForStates(a, ['seen', 'seen', 'seen']);
    await b2.waitForFunction((sel) => document.querySelector(`${sel} .preview`)?.textContent === 'four', { timeout: WAIT }, conversationItem(alice));
    await waitForUnread(b2, alice, '');
    assert.deepEqual(await states(a), ['seen', 'seen', 'seen']);
  } catch (e) {
    await screenshots(t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60));
    throw e;
  } finally {
    pages.clear();
    await ctxA.close();
    await ctxB1.close();
    await ctxB2.close();
  }
});
