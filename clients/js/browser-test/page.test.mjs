// The web chat page as people see it, at a desktop width (1280 px) and a phone width (390 px): no
// horizontal overflow, a 400-character word wraps inside its bubble, a "hi" bubble is as narrow as its
// text, day separators, the phone shows the list or the chat (never both); the empty and loading states;
// a session that survives a reload (and sign-out that ends it) with unread counts and the tab title's
// total unchanged by the reload; the offline state during an outage (the composer waits) and the chat
// going on after it; errors in words. Layout is asserted by measuring the page (its geometry), and
// screenshots of each screen are saved under QIM_BROWSER_ARTIFACTS (web-desktop.png, web-phone-list.png,
// web-phone-chat.png, ...) for people to look at.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { user } from '../test/qim.mjs';
import {
  DESKTOP,
  PHONE,
  WAIT,
  bodies,
  clickListItem,
  conversationItem,
  launch,
  openChat,
  pages,
  removeProfiles,
  screenshot,
  screenshots,
  send,
  sendPasted,
  shown,
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

async function failing(name, body) {
  try {
    await body();
  } catch (e) {
    await screenshots(name);
    throw e;
  } finally {
    pages.clear();
  }
}

// Geometry of the page: its overflow, and each bubble's box against the chat column.
function measure(page) {
  return page.evaluate(() => {
    const column = document.querySelector('[data-testid=scroller]').getBoundingClientRect();
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, width: r.width, text: el.querySelector('.body').textContent };
    };
    return {
      viewport: window.innerWidth,
      scrollWidth: document.documentElement.scrollWidth,
      bodyScrollWidth: document.body.scrollWidth,
      column: { left: column.left, right: column.right, width: column.width },
      bubbles: [...document.querySelectorAll('[data-testid=message]')].map(box),
      days: [...document.querySelectorAll('[data-testid=day]')].map((d) => d.textContent),
      firstIsDay: document.querySelector('[data-testid=messages]').firstElementChild?.dataset.testid === 'day',
    };
  });
}

function assertLayout(m, where) {
  assert.ok(m.scrollWidth <= m.viewport, `${where}: the page is ${m.scrollWidth} px wide in a ${m.viewport} px window`);
  assert.ok(m.bodyScrollWidth <= m.viewport, `${where}: the body is ${m.bodyScrollWidth} px wide`);
  for (const b of m.bubbles) {
    assert.ok(
      b.left >= m.column.left - 0.5 && b.right <= m.column.right + 0.5,
      `${where}: a bubble (${b.left}..${b.right}) leaves the chat column (${m.column.left}..${m.column.right})`,
    );
  }
  const hi = m.bubbles.find((b) => b.text === 'hi');
  assert.ok(hi, `${where}: the "hi" bubble`);
  assert.ok(hi.width < 0.35 * m.column.width, `${where}: "hi" is ${hi.width} px wide in a ${m.column.width} px column`);
  assert.ok(m.days.length >= 1 && m.days.includes('Today'), `${where}: day separators ${JSON.stringify(m.days)}`);
  assert.ok(m.firstIsDay, `${where}: the first message follows a day separator`);
}

const LONG_WORD = 'x'.repeat(400);

test('layout: a desktop and a phone width, long words wrap, bubbles fit their text, list or chat on a phone', async () => {
  await failing('layout', async () => {
    const alice = user('alice');
    const bob = user('bob');
    const ctxA = await browser.createBrowserContext();
    const ctxB = await browser.createBrowserContext();
    try {
      const a = await signIn(ctxA, 'alice', alice, origin(), DESKTOP);
      // Empty states: no conversation yet, none picked.
      await a.waitForSelector('[data-testid=list-state][data-state=empty]', { timeout: WAIT });
      assert.equal(await shown(a, '[data-testid=no-chat]'), true);
      await screenshot(a, 'web-desktop-empty');

      // Another conversation, for a fuller list.
      const carol = user('carol');
      await openChat(a, carol);
      await send(a, 'See you at ten?');
      await openChat(a, bob);
      // A new conversation: nothing older to load, an empty-chat note instead.
      await a.waitForSelector('[data-testid=chat-state][data-state=empty]', { timeout: WAIT });
      assert.equal(await shown(a, '[data-testid=older]'), false);
      await send(a, 'hi');
      await sendPasted(a, LONG_WORD);
      await send(a, 'Here is a longer message, so that the bubble grows with its text and wraps onto a second line at a phone width.');
      await a.waitForFunction(
        () => [...document.querySelectorAll('[data-testid=message].mine')].filter((m) => m.dataset.state === 'delivered').length === 3,
        { timeout: WAIT },
      );

      // Bob at a phone width: the list first, only the list.
      const b = await signIn(ctxB, 'bob', bob, origin(), PHONE);
      await b.waitForSelector(conversationItem(alice), { timeout: WAIT });
      await send(a, 'are you there?'); // one more, live
      await waitForUnread(b, alice, '4');
      assert.equal(await shown(b, '[data-testid=sidebar]'), true);
      assert.equal(await shown(b, '[data-testid=chat]'), false);
      assert.equal(await shown(b, '[data-testid=no-chat]'), false);
      const list = await b.evaluate(() => ({ w: document.documentElement.scrollWidth, v: window.innerWidth }));
      assert.ok(list.w <= list.v, `phone list: ${list.w} px wide in ${list.v}`);
      await screenshot(b, 'web-phone-list');

      // Bob opens it: the chat, only the chat; his answer.
      await clickListItem(b, conversationItem(alice));
      await waitForBodies(b, ['hi', LONG_WORD, 'are you there?']);
      assert.equal(await shown(b, '[data-testid=sidebar]'), false);
      assert.equal(await shown(b, '[data-testid=chat]'), true);
      await send(b, 'yes, I am here');
      await waitForBodies(a, ['yes, I am here']);
      // Everything bob holds came from the mailbox: history has nothing older, so no "Load older".
      await b.waitForSelector('[data-testid=chat-state][data-state=beginning]', { timeout: WAIT });
      assert.equal(await shown(b, '[data-testid=older]'), false);
      assertLayout(await measure(b), 'phone');
      assertLayout(await measure(a), 'desktop');
      await screenshot(b, 'web-phone-chat');
      await screenshot(a, 'web-desktop');

      // Back to the list on the phone.
      await b.click('[data-testid=back]');
      assert.equal(await shown(b, '[data-testid=sidebar]'), true);
      assert.equal(await shown(b, '[data-testid=chat]'), false);
      await waitForUnread(b, alice, '');
    } finally {
      await ctxA.close();
      await ctxB.close();
    }
  });
});

test('a reload keeps the session, the chat shown and the unread counts; sign-out ends it', async () => {
  await failing('session', async () => {
    const alice = user('alice');
    const bob = user('bob');
    const carol = user('carol');
    const ctxA = await browser.createBrowserContext();
    const ctxB = await browser.createBrowserContext();
    try {
      const a = await signIn(ctxA, 'alice', alice, origin());
      const b = await signIn(ctxB, 'bob', bob, origin());
      await openChat(a, bob);
      await send(a, 'one');
      await send(a, 'two');
      await waitForUnread(b, alice, '2');
      // The tab title carries the unread total.
      await b.waitForFunction(() => document.title === '(2) QIM chat', { timeout: WAIT });

      // A reload: still signed in (no sign-in form), the same counts.
      await b.reload({ waitUntil: 'load' });
      await waitOnline(b);
      assert.equal(await shown(b, '[data-testid=signin]'), false);
      await waitForUnread(b, alice, '2');
      assert.equal(await b.title(), '(2) QIM chat');

      // Read, then reloaded: read it stays, and the chat shown is shown again.
      await clickListItem(b, conversationItem(alice));
      await waitForBodies(b, ['one', 'two']);
      await b.waitForFunction(() => document.title === 'QIM chat', { timeout: WAIT });
      await openChat(b, carol); // a conversation without messages
      await clickListItem(b, conversationItem(alice));
      await b.reload({ waitUntil: 'load' });
      await waitOnline(b);
      await b.waitForFunction((p) => document.querySelector('[data-testid=chat-title]')?.textContent === p, { timeout: WAIT }, alice);
      await waitForBodies(b, ['one', 'two']);
      assert.deepEqual(await bodies(b), ['one', 'two']);
      await waitForUnread(b, alice, '');
      assert.equal(await b.title(), 'QIM chat');

      // One more while bob's tab shows another chat: counted, in the title too, and after a reload.
      await openChat(b, carol);
      await send(a, 'three');
      await waitForUnread(b, alice, '1');
      await b.reload({ waitUntil: 'load' });
      await waitOnline(b);
      await waitForUnread(b, alice, '1');
      assert.equal(await b.title(), '(1) QIM chat');

      // Sign out: the sign-in form, and a reload does not sign in again.
      await b.click('[data-testid=signout]');
      assert.equal(await shown(b, '[data-testid=signin]'), true);
      assert.equal(await shown(b, '#app'), false);
      await b.reload({ waitUntil: 'load' });
      assert.equal(await shown(b, '[data-testid=signin]'), true);
      assert.equal(await b.evaluate(() => sessionStorage.getItem('qim.session')), null);
    } finally {
      await ctxA.close();
      await ctxB.close();
    }
  });
});

test('an outage: the page says it is offline, the composer waits, the chat goes on after it', async () => {
  // A server of its own, stopped and started again on the same port and data directory.
  const own = await startQim();
  const at = `http://127.0.0.1:${own.port}`;
  await failing('outage', async () => {
    const alice = user('alice');
    const bob = user('bob');
    const ctxA = await browser.createBrowserContext();
    const ctxB = await browser.createBrowserContext();
    try {
      const a = await signIn(ctxA, 'alice', alice, at, PHONE);
      const b = await signIn(ctxB, 'bob', bob, at);
      await openChat(a, bob);
      await send(a, 'before');
      await b.waitForSelector(conversationItem(alice), { timeout: WAIT });
      await clickListItem(b, conversationItem(alice));
      await waitForBodies(b, ['before']);

      own.fixedPort = own.port;
      await own.stop();
      await a.waitForSelector('[data-testid=offline]:not([hidden])', { timeout: WAIT });
      assert.equal(await a.$eval('[data-testid=send]', (x) => x.disabled), true);
      // What is typed meanwhile stays in the composer; Enter does not send it.
      await a.type('[data-testid=body]', 'after');
      await a.keyboard.press('Enter');
      assert.equal(await a.$eval('[data-testid=body]', (x) => x.value), 'after');
      await screenshot(a, 'web-phone-offline');

      await own.start();
      await waitOnline(a);
      await a.waitForSelector('[data-testid=offline][hidden]', { timeout: WAIT });
      await a.click('[data-testid=send]');
      await waitOnline(b);
      await waitForBodies(b, ['before', 'after']);
      assert.deepEqual(await bodies(b), ['before', 'after']);
    } finally {
      await ctxA.close();
      await ctxB.close();
    }
  }).finally(() => own.destroy());
});

test('errors are said in words, not protocol text', async () => {
  await failing('errors', async () => {
    const alice = user('alice');
    const ctx = await browser.createBrowserContext();
    try {
      // A name the server would refuse, on the sign-in form.
      const p = await ctx.newPage();
      pages.set('alice', p);
      await p.goto(`${origin()}/`, { waitUntil: 'load' });
      await p.type('#user', 'not a name!');
      await p.click('#signin button[type=submit]');
      const signinError = await p.$eval('[data-testid=signin-error]', (e) => e.textContent);
      assert.match(signinError, /not a valid user name/);
      await p.close();

      // A message over the server's body limit (16 KiB): refused with TOO_LARGE, said as "too long".
      const a = await signIn(ctx, 'alice', alice, origin());
      await openChat(a, user('bob'));
      const tooLong = 'y'.repeat(17_000);
      await sendPasted(a, tooLong);
      await a.waitForFunction(() => document.querySelector('[data-testid=chat-error]')?.textContent !== '', { timeout: WAIT });
      const text = await a.$eval('[data-testid=chat-error]', (e) => e.textContent);
      assert.match(text, /too long/);
      assert.doesNotMatch(text, /TOO_LARGE|INVALID|[{}]/);
      // Trying again cannot help: it is back in the composer to be shortened, not a failed bubble.
      assert.equal(await a.$eval('[data-testid=body]', (e) => e.value), tooLong);
      assert.deepEqual(await bodies(a), []);
      // A group with a member name the server would refuse: said before anything is sent.
      await a.click('[data-testid=new-group-toggle]');
      await a.type('[data-testid=group-name]', 'team');
      await a.type('[data-testid=group-members]', 'bob, no!way');
      await a.click('[data-testid=create-group]');
      await a.waitForFunction(() => document.querySelector('[data-testid=group-error]')?.textContent.includes('not a valid user name'), {
        timeout: WAIT,
      });
    } finally {
      await ctx.close();
    }
  });
});
