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
