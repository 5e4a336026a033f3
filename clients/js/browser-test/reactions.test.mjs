// Reactions and replies on the web page in a real browser (browser.mjs: Debian's Chromium, headless,
// puppeteer-core), two browser contexts against a real `qim up` serving the page. Reactions: one context
// reacts from the message's menu, the other sees the count live and after a reload, toggles its own, and
// the first sees that too. Replies: "Reply" in the menu shows the message above the composer and the SEND
// carries `reply_to`; the quote on both sides needs the server to keep `reply_to` (decision 125): until it
// does, that part is skipped, saying so.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { QimClient, directConversation } from '../dist/index.js';
import { user } from '../test/qim.mjs';
import { WAIT, clickListItem, launch, openChat, removeProfiles, screenshot, screenshots, send, signIn as signInAt, startQim } from './browser.mjs';

let qim;
let browser;

before(async () => {
  qim = await startQim();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await qim?.destroy();
  removeProfiles();
});

function signIn(context, who, name) {
  return signInAt(context, who, name, `http://127.0.0.1:${qim.port}`);
}

function waitForExactBodies(page, expected) {
  return page.waitForFunction(
    (want) => JSON.stringify([...document.querySelectorAll('[data-testid=message] .body')].map((e) => e.textContent)) === JSON.stringify(want),
    { timeout: WAIT },
    expected,
  );
}

// The reaction chips of the message whose body is `text`: "emoji count" with * for mine, e.g. "👍 2*".
function chipsOf(page, text) {
  return page.evaluate((t) => {
    const li = [...document.querySelectorAll('[data-testid=message]')].find((m) => m.querySelector('.body')?.textContent === t);
    return [...(li?.querySelectorAll('[data-testid=reaction]') ?? [])].map((c) => `${c.dataset.emoji} ${c.dataset.count}${c.dataset.mine === 'true' ? '*' : ''}`);
  }, text);
}

function waitForChips(page, text, expected) {
  return page.waitForFunction(
    (t, want) => {
      const li = [...document.querySelectorAll('[data-testid=message]')].find((m) => m.querySelector('.body')?.textContent === t);
      const got = [...(li?.querySelectorAll('[data-testid=reaction]') ?? [])].map(
        (c) => `${c.dataset.emoji} ${c.dataset.count}${c.dataset.mine === 'true' ? '*' : ''}`,
      );
      return JSON.stringify(got) === JSON.stringify(want);
    },
    { timeout: WAIT },
    text,
    expected,
  );
}

// Opens the menu of the message whose body is `text` and clicks `selector` in it, in one step in the page
// (a re-render between two puppeteer calls would replace the menu).
async function inMenu(page, text, selector) {
  await page.waitForFunction(
    (t, s) =>
      [...document.querySelectorAll('[data-testid=message]')].some((li) => li.querySelector('.body')?.textContent === t && li.querySelector(s)),
    { timeout: WAIT },
    text,
    selector,
  );
  await page.evaluate(
    (t, s) => {
      const li = [...document.querySelectorAll('[data-testid=message]')].find((m) => m.querySelector('.body')?.textContent === t);
      li.querySelector('[data-testid=message-menu] > summary').click();
      li.querySelector(s).click();
    },
    text,
    selector,
  );
}

// A chip of the message whose body is `text`, clicked in the page.
function clickChip(page, text, emoji) {
  return page.evaluate(
    (t, e) => {
      const li = [...document.querySelectorAll('[data-testid=message]')].find((m) => m.querySelector('.body')?.textContent === t);
      li.querySelector(`[data-testid=reaction][data-emoji="${e}"]`).click();
    },
    text,
    emoji,
  );
}

test('reactions from the page: one context reacts, the other sees it live and after a reload, and toggles its own', async (t) => {
  const alice = user('alice');
  const bob = user('bob');
  const ctxA = await browser.createBrowserContext();
  const ctxB = await browser.createBrowserContext();
  try {
    const a = await signIn(ctxA, 're-alice', alice);
    const b = await signIn(ctxB, 're-bob', bob);
    await openChat(a, bob);
    await send(a, 'lunch?');
    await clickListItem(b, `[data-testid=conversation][data-peer="${alice}"]`);
    await waitForExactBodies(b, ['lunch?']);
    await a.waitForFunction(() => document.querySelector('[data-testid=message].mine')?.dataset.messageId !== '', { timeout: WAIT });

    // Alice picks 👍 from the menu: hers at once, bob's live.
    await inMenu(a, 'lunch?', '[data-testid=react][data-emoji="👍"]');
    await waitForChips(a, 'lunch?', ['👍 1*']);
    await waitForChips(b, 'lunch?', ['👍 1']);
    // Bob reloads: the mailbox from 0 (the message, then its reaction), folded: the same.
    await b.reload({ waitUntil: 'load' });
    await waitForExactBodies(b, ['lunch?']);
    await waitForChips(b, 'lunch?', ['👍 1']);

    // Bob adds his by the chip, and 🎉 from the menu: alice sees both live.
    await clickChip(b, 'lunch?', '👍');
    await waitForChips(b, 'lunch?', ['👍 2*']);
    await inMenu(b, 'lunch?', '[data-testid=react][data-emoji="🎉"]');
    await waitForChips(a, 'lunch?', ['👍 2*', '🎉 1']);
    await waitForChips(b, 'lunch?', ['👍 2*', '🎉 1*']);
    await screenshot(b, 'web-desktop-reactions');

    // Alice takes hers back: one left on both sides, live and after alice's reload.
    await clickChip(a, 'lunch?', '👍');
    await waitForChips(b, 'lunch?', ['👍 1*', '🎉 1*']);
    await waitForChips(a, 'lunch?', ['👍 1', '🎉 1']);
    await a.reload({ waitUntil: 'load' });
    await waitForExactBodies(a, ['lunch?']);
    await waitForChips(a, 'lunch?', ['👍 1', '🎉 1']);
    assert.deepEqual(await chipsOf(b, 'lunch?'), ['👍 1*', '🎉 1*']);
  } catch (e) {
    await screenshots(`reactions-failure-${t.name.slice(0, 20).replace(/\W+/g, '-')}`);
    throw e;
  } finally {
    await ctxA.close();
    await ctxB.close();
  }
});

// Whether this server keeps SEND's `reply_to` (decision 125 built): a reply sent with the SDK comes back
// from HISTORY with it.
async function serverKeepsReplies() {
  const a = user('probe'), b = user('probe');
  const c = new QimClient({ url: qim.url, token: qim.token(a), createSocket: qim.socketFactory() });
  try {
    await c.start();
    const first = await c.send({ to: b, body: 'q' });
    const reply = await c.send({ to: b, body: 'r', replyTo: first.message_id });
    const page = await c.history(directConversation(a, b));
    return page.messages.find((m) => m.message_id === reply.message_id)?.reply_to === first.message_id;
  } finally {
    c.close();
  }
}

test('replies from the page: Reply shows the message over the composer; the reply quotes it on both sides, live and after a reload', async (t) => {
  const alice = user('alice');
  const bob = user('bob');
  const ctxA = await browser.createBrowserContext();
  const ctxB = await browser.createBrowserContext();
  try {
    const a = await signIn(ctxA, 'rp-alice', alice);
    const b = await signIn(ctxB, 'rp-bob', bob);
    await openChat(a, bob);
    await send(a, 'lunch at noon?');
    await clickListItem(b, `[data-testid=conversation][data-peer="${alice}"]`);
    await waitForExactBodies(b, ['lunch at noon?']);
    await b.waitForFunction(() => document.querySelector('[data-testid=message]')?.dataset.messageId !== '', { timeout: WAIT });

    // Bob replies from the menu: the bar shows alice's message; Cancel closes it, Reply again, then send.
    await inMenu(b, 'lunch at noon?', '[data-testid=reply]');
    await b.waitForSelector('[data-testid=replying]:not([hidden])', { timeout: WAIT });
    assert.equal(await b.$eval('[data-testid=replying-text]', (e) => e.textContent), 'lunch at noon?');
    await b.click('[data-testid=cancel-reply]');
    await b.waitForSelector('[data-testid=replying][hidden]', { timeout: WAIT });
    await inMenu(b, 'lunch at noon?', '[data-testid=reply]');
    await b.waitForSelector('[data-testid=replying]:not([hidden])', { timeout: WAIT });
    await screenshot(b, 'web-desktop-replying');
    await send(b, 'yes!');
    await b.waitForSelector('[data-testid=replying][hidden]', { timeout: WAIT });
    await waitForExactBodies(a, ['lunch at noon?', 'yes!']);

    if (!(await serverKeepsReplies())) {
      t.skip('this server ignores SEND reply_to (decision 125 not built yet): the quote on both sides is not checked');
      return;
    }
    const quoteOf = (p) =>
      p.waitForFunction(
        () => {
          const li = [...document.querySelectorAll('[data-testid=message]')].find((m) => m.querySelector('.body')?.textContent === 'yes!');
          return li?.querySelector('[data-testid=quote] .quote-text')?.textContent === 'lunch at noon?';
        },
        { timeout: WAIT },
      );
    for (const p of [a, b]) await quoteOf(p);
    await screenshot(a, 'web-desktop-reply');
    for (const p of [a, b]) {
      await p.reload({ waitUntil: 'load' });
      await waitForExactBodies(p, ['lunch at noon?', 'yes!']);
      await quoteOf(p);
    }
  } catch (e) {
    await screenshots(`replies-failure-${t.name.slice(0, 20).replace(/\W+/g, '-')}`);
    throw e;
  } finally {
    await ctxA.close();
    await ctxB.close();
  }
});
