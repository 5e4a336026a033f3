// The web chat page in a real browser (browser.mjs: Debian's Chromium, headless, puppeteer-core). Two
// browser contexts sign in as two users, chat, one goes away (its page closed) and comes back to find what
// was sent meanwhile, with the unread count. Against a real `qim up` serving the page (QIM_WEB_DIR) and
// development tokens (QIM_WEB_DEV_TOKENS=1). A group of three chats: created from the page, its members
// listed, unread counts, system entries shown as such, a member removed. Screenshots of every page are
// saved on failure under QIM_BROWSER_ARTIFACTS (default: build/browser-artifacts), and the path printed.
// The page's layout, session, offline and error states: page.test.mjs.
import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { user } from '../test/qim.mjs';
import {
  DESKTOP,
  PHONE,
  WAIT,
  bodies,
  clickListItem,
  launch,
  openChat,
  pages,
  removeProfiles,
  screenshot,
  screenshots,
  send,
  signIn as signInAt,
  startQim,
  waitForBodies,
  waitForUnread,
} from './browser.mjs';

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

function signIn(context, who, name, origin = `http://127.0.0.1:${qim.port}`) {
  return signInAt(context, who, name, origin);
}

test('two users chat in two browser contexts; one goes away and comes back to find the messages', async (t) => {
  const alice = user('alice');
  const bob = user('bob');
  const ctxA = await browser.createBrowserContext();
  const ctxB = await browser.createBrowserContext();
  try {
    const a = await signIn(ctxA, 'alice', alice);
    let b = await signIn(ctxB, 'bob', bob);

    await openChat(a, bob);
    await send(a, 'hi bob');
    // Alice's own message goes sending -> sent -> delivered (bob's mailbox holds it: DELIVERED).
    await a.waitForFunction(() => document.querySelector('[data-testid=message].mine')?.dataset.state === 'delivered', {
      timeout: WAIT,
    });

    // Bob sees the conversation appear live with one unread message, opens it, answers.
    await b.waitForSelector(`[data-testid=conversation][data-peer="${alice}"]`, { timeout: WAIT });
    await waitForUnread(b, alice, '1');
    await clickListItem(b, `[data-testid=conversation][data-peer="${alice}"]`);
    await waitForBodies(b, ['hi bob']);
    await waitForUnread(b, alice, ''); // read: READ, and the server's count
    await send(b, 'hi alice');
    await waitForBodies(a, ['hi bob', 'hi alice']);

    // Bob goes away; Alice writes twice meanwhile.
    await b.close();
    pages.delete('bob');
    await send(a, 'are you there?');
    await send(a, 'call me');
    await a.waitForFunction(
      () =>
        [...document.querySelectorAll('[data-testid=message].mine')].filter((m) => m.dataset.state === 'delivered' || m.dataset.state === 'seen')
          .length === 3,
      { timeout: WAIT },
    );

    // Bob comes back (a new page: a new device) and finds both, counted unread, then in the chat.
    b = await signIn(ctxB, 'bob', bob);
    await b.waitForFunction(
      (p) => document.querySelector(`[data-testid=conversation][data-peer="${p}"] [data-testid=unread]`)?.textContent === '2',
      { timeout: WAIT },
      alice,
    );
    await clickListItem(b, `[data-testid=conversation][data-peer="${alice}"]`);
    await waitForBodies(b, ['hi bob', 'hi alice', 'are you there?', 'call me']);
    assert.deepEqual(await bodies(b), ['hi bob', 'hi alice', 'are you there?', 'call me']);
  } catch (e) {
    await screenshots(t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60));
    throw e;
  } finally {
    await ctxA.close();
    await ctxB.close();
  }
});

// Opens the menu of the message whose body is `text` and clicks its `action` (edit, recall, delete): in one
// step in the page, as a re-render between two puppeteer calls would replace the menu.
async function messageAction(page, text, action) {
  await page.waitForFunction(
    (t, a) =>
      [...document.querySelectorAll('[data-testid=message]')].some(
        (li) => li.querySelector('.body')?.textContent === t && li.querySelector(`[data-testid=${a}]`),
      ),
    { timeout: WAIT },
    text,
    action,
  );
  await page.evaluate(
    (t, a) => {
      const li = [...document.querySelectorAll('[data-testid=message]')].find((m) => m.querySelector('.body')?.textContent === t);
      li.querySelector('[data-testid=message-menu] > summary').click();
      li.querySelector(`[data-testid=${a}]`).click();
    },
    text,
    action,
  );
}

// The bodies shown in the chat, and those marked edited.
function waitForExactBodies(page, expected) {
  return page.waitForFunction(
    (want) => JSON.stringify([...document.querySelectorAll('[data-testid=message] .body')].map((e) => e.textContent)) === JSON.stringify(want),
    { timeout: WAIT },
    expected,
  );
}

test('edit, recall, mute, delete for me and block from the page: both sides see each change live and after a reload', async (t) => {
  const alice = user('alice');
  const bob = user('bob');
  const ctxA = await browser.createBrowserContext();
  const ctxB = await browser.createBrowserContext();
  try {
    const a = await signIn(ctxA, 'lc-alice', alice);
    const b = await signIn(ctxB, 'lc-bob', bob);
    await openChat(a, bob);
    await send(a, 'helo');
    await clickListItem(b, `[data-testid=conversation][data-peer="${alice}"]`);
    await waitForExactBodies(b, ['helo']);

    // Alice edits from the message's menu: the composer holds the body until Save.
    await a.waitForFunction(() => document.querySelector('[data-testid=message].mine')?.dataset.messageId !== '', { timeout: WAIT });
    await messageAction(a, 'helo', 'edit');
    assert.equal(await a.$eval('[data-testid=body]', (i) => i.value), 'helo');
    assert.equal(await a.$eval('[data-testid=send]', (bt) => bt.textContent), 'Save');
    await a.$eval('[data-testid=body]', (i) => (i.value = 'hello'));
    await a.click('[data-testid=send]');
    for (const p of [a, b]) {
      await waitForExactBodies(p, ['hello']);
      await p.waitForSelector('[data-testid=message] [data-testid=edited]', { timeout: WAIT });
    }
    // Bob reloads: the mailbox from 0 (the message, then its edit), folded: the same.
    await b.reload({ waitUntil: 'load' });
    await waitForExactBodies(b, ['hello']);
    await b.waitForSelector('[data-testid=message] [data-testid=edited]', { timeout: WAIT });
    await b.evaluate(() => (document.querySelector('[data-testid=message-menu]').open = true));
    await screenshot(b, 'web-desktop-edited');
    await b.evaluate(() => (document.querySelector('[data-testid=message-menu]').open = false));

    // Alice recalls it: a placeholder in place, on both sides, live and after a reload.
    await messageAction(a, 'hello', 'recall');
    for (const p of [a, b]) await waitForExactBodies(p, ['message recalled']);
    assert.equal(await b.$eval('[data-testid=message]', (li) => li.classList.contains('recalled')), true);
    await b.reload({ waitUntil: 'load' });
    await waitForExactBodies(b, ['message recalled']);

    // Bob mutes the conversation from its header and looks at another: Alice's next message is counted on
    // its row, but the tab's total leaves it out.
    await b.click('[data-testid=mute]');
    await b.waitForFunction(() => document.querySelector('[data-testid=mute]')?.dataset.muted === 'true', { timeout: WAIT });
    await openChat(b, user('carol'));
    await send(a, 'ping');
    await waitForUnread(b, alice, '1');
    await b.waitForSelector(`[data-testid=conversation][data-peer="${alice}"][data-muted=true]`, { timeout: WAIT });
    assert.equal(await b.title(), 'QIM chat');

    // Delete for me: gone from Bob's view (after a reload too), still in Alice's.
    await clickListItem(b, `[data-testid=conversation][data-peer="${alice}"]`);
    await waitForExactBodies(b, ['message recalled', 'ping']);
    await messageAction(b, 'ping', 'delete');
    await waitForExactBodies(b, ['message recalled']);
    await b.reload({ waitUntil: 'load' });
    await waitForExactBodies(b, ['message recalled']);
    await waitForExactBodies(a, ['message recalled', 'ping']);

    // Bob blocks Alice from the header: her next message is refused, and the page tells her why.
    await b.waitForSelector('[data-testid=block][data-blocked=false]', { timeout: WAIT });
    await b.click('[data-testid=block]');
    await b.waitForSelector('[data-testid=block][data-blocked=true]', { timeout: WAIT });
    await send(a, 'let me in');
    await a.waitForFunction(() => /blocked you/.test(document.querySelector('[data-testid=chat-error]')?.textContent ?? ''), {
      timeout: WAIT,
    });
    assert.ok(!(await bodies(b)).includes('let me in'));
    await screenshot(a, 'web-desktop-blocked');
  } catch (e) {
    await screenshots(t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60));
    throw e;
  } finally {
    pages.delete('lc-alice');
    pages.delete('lc-bob');
    await ctxA.close();
    await ctxB.close();
  }
});

function groupItem(name) {
  return `[data-testid=conversation][data-name="${name}"]`;
}

// The members listed in the group panel, sorted, as "user:role".
function membersOf(page) {
  return page.$$eval('[data-testid=member]', (lis) => lis.map((li) => `${li.dataset.user}:${li.dataset.role}`).sort());
}

async function waitForMembers(page, expected) {
  await page.waitForFunction(
    (want) => {
      const got = [...document.querySelectorAll('[data-testid=member]')].map((li) => `${li.dataset.user}:${li.dataset.role}`);
      return JSON.stringify(got.sort()) === JSON.stringify([...want].sort());
    },
    { timeout: WAIT },
    expected,
  );
}

test('a group of three chats: created on the page, unread counts, system entries, a member removed', async () => {
  const [alice, bob, carol] = [user('alice'), user('bob'), user('carol')];
  const name = `trio-${process.pid}`;
  const contexts = [];
  try {
    const open = async (who, n, viewport = DESKTOP) => {
      const ctx = await browser.createBrowserContext();
      contexts.push(ctx);
      return signInAt(ctx, who, n, `http://127.0.0.1:${qim.port}`, viewport);
    };
    const a = await open('g-alice', alice);
    const b = await open('g-bob', bob);
    const c = await open('g-carol', carol, PHONE); // the group on a phone

    // Alice creates the group from the page; its chat opens with the three members.
    await a.click('[data-testid=new-group-toggle]');
    await a.type('[data-testid=group-name]', name);
    await a.type('[data-testid=group-members]', `${bob}, ${carol}`);
    await a.click('[data-testid=create-group]');
    await a.waitForFunction((n) => document.querySelector('[data-testid=chat-title]')?.textContent === n, { timeout: WAIT }, name);
    await waitForMembers(a, [`${alice}:owner`, `${bob}:member`, `${carol}:member`]);
    await a.waitForSelector('[data-testid=system]', { timeout: WAIT });
    await send(a, 'welcome');

    // Bob and Carol find it in their lists, by name, with one unread message (the system entry not counted).
    for (const p of [b, c]) {
      await p.waitForFunction(
        (sel) => document.querySelector(`${sel} [data-testid=unread]`)?.textContent === '1',
        { timeout: WAIT },
        groupItem(name),
      );
    }
    await clickListItem(b, groupItem(name));
    await waitForBodies(b, ['welcome']);
    await b.waitForFunction((sel) => document.querySelector(`${sel} [data-testid=unread]`)?.textContent === '', { timeout: WAIT }, groupItem(name));
    // Bob read it: Alice's message says "seen" (a group has no "delivered": only receipts).
    await a.waitForFunction(() => document.querySelector('[data-testid=message].mine')?.dataset.state === 'seen', { timeout: WAIT });
    await send(b, 'hi all');
    await clickListItem(c, groupItem(name));
    await waitForBodies(c, ['welcome', 'hi all']);
    await send(c, 'hi from carol');
    for (const p of [a, b]) await waitForBodies(p, ['welcome', 'hi all', 'hi from carol']);
    // The group's creation is shown as a system entry, not as a message of Alice's.
    const system = await c.$$eval('[data-testid=system]', (lis) => lis.map((li) => li.textContent));
    assert.ok(system.length >= 1 && system.every((text) => !text.startsWith('{')), JSON.stringify(system));
    assert.deepEqual(await membersOf(c), [`${alice}:owner`, `${bob}:member`, `${carol}:member`].sort());
    await screenshot(c, 'web-phone-group');
    await screenshot(a, 'web-desktop-group');

    // Alice removes Carol: Carol's page says she is out, Bob sees the removal, Carol gets nothing more.
    await clickListItem(a, `[data-testid=member][data-user="${carol}"] [data-testid=remove]`);
    await waitForMembers(a, [`${alice}:owner`, `${bob}:member`]);
    await c.waitForSelector('[data-testid=left-note]:not([hidden])', { timeout: WAIT });
    assert.equal(await c.$eval('#composer', (f) => f.hidden), true);
    await waitForMembers(b, [`${alice}:owner`, `${bob}:member`]);
    await send(a, 'just us two');
    await waitForBodies(b, ['just us two']);
    assert.ok(!(await bodies(c)).includes('just us two'));
  } catch (e) {
    await screenshots('group-of-three');
    throw e;
  } finally {
    for (const who of ['g-alice', 'g-bob', 'g-carol']) pages.delete(who);
    for (const ctx of contexts) await ctx.close();
  }
});

test('over https:// and wss:// with the development certificate', async (t) => {
  const tls = await startQim({ tls: true });
  // Chromium trusts exactly this certificate's key (its SPKI hash), nothing else: no verification is off.
  const spki = new X509Certificate(readFileSync(join(tls.dir, 'tls', 'dev-cert.pem'))).publicKey.export({
    type: 'spki',
    format: 'der',
  });
  const pin = createHash('sha256').update(spki).digest('base64');
  const secure = await launch([`--ignore-certificate-errors-spki-list=${pin}`]);
  const origin = `https://127.0.0.1:${tls.port}`;
  const alice = user('alice');
  const bob = user('bob');
  try {
    const a = await signIn(await secure.createBrowserContext(), 'tls-alice', alice, origin);
    const b = await signIn(await secure.createBrowserContext(), 'tls-bob', bob, origin);
    await openChat(a, bob);
    await send(a, 'over wss');
    await b.waitForSelector(`[data-testid=conversation][data-peer="${alice}"]`, { timeout: WAIT });
    await clickListItem(b, `[data-testid=conversation][data-peer="${alice}"]`);
    await waitForBodies(b, ['over wss']);
    assert.equal(await b.evaluate(() => location.protocol), 'https:');
  } catch (e) {
    await screenshots('https');
    throw e;
  } finally {
    pages.delete('tls-alice');
    pages.delete('tls-bob');
    await secure.close();
    await tls.destroy();
  }
});
