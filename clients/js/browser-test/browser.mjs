// What the browser tests share: Debian's Chromium, headless, driven by puppeteer-core (nothing downloads
// a browser); a `qim up` serving the page (QIM_WEB_DIR) with development tokens; signing in, chatting and
// reading the page the way a person would. Screenshots go to QIM_BROWSER_ARTIFACTS (default:
// build/browser-artifacts).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { Qim } from '../test/qim.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const WEB_DIR = resolve(here, '../../web');
export const CHROMIUM = process.env.QIM_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = process.env.QIM_BROWSER_ARTIFACTS ?? resolve(here, '../../../build/browser-artifacts');
export const WAIT = 20_000;
export const PHONE = { width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
export const DESKTOP = { width: 1280, height: 800 };

const profiles = [];

// Debian's Chromium, headless, a fresh profile; `extra` flags (e.g. the certificate to trust).
export function launch(extra = []) {
  const profile = mkdtempSync('/tmp/web-chromium-');
  profiles.push(profile);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    defaultViewport: DESKTOP,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--font-render-hinting=none',
      ...extra,
    ],
  });
}

export function removeProfiles() {
  for (const p of profiles.splice(0)) rmSync(p, { recursive: true, force: true });
}

/** A `qim up` serving the page with development tokens. */
export function startQim(options = {}) {
  assert.ok(existsSync(join(WEB_DIR, 'sdk', 'index.js')), 'run `npm run build` first (the page needs sdk/)');
  return new Qim({ ...options, env: { QIM_WEB_DIR: WEB_DIR, QIM_WEB_DEV_TOKENS: '1', ...options.env } }).start();
}

/** Pages by name, for the screenshots. */
export const pages = new Map();

export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`browser test: screenshot saved to ${file}`);
  return file;
}

export async function screenshots(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const [who, page] of pages) {
    if (page.isClosed()) continue;
    const file = join(ARTIFACTS, `${name}-${who}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    console.log(`browser test: screenshot saved to ${file}`);
  }
}

export function waitOnline(page) {
  return page.waitForSelector('[data-testid=state][data-state=online]', { timeout: WAIT });
}

export async function signIn(context, who, name, origin, viewport = DESKTOP) {
  const page = await context.newPage();
  await page.setViewport(viewport);
  pages.set(who, page);
  page.on('pageerror', (e) => console.log(`[${who}] page error: ${e.message}`));
  await page.goto(`${origin}/`, { waitUntil: 'load' });
  await page.type('#user', name);
  await page.click('#signin button[type=submit]');
  await waitOnline(page);
  return page;
}

export async function openChat(page, peer) {
  await page.type('[data-testid=peer]', peer);
  await page.click('[data-testid=open-chat]');
  await page.waitForFunction((p) => document.querySelector('[data-testid=chat-title]')?.textContent === p, { timeout: WAIT }, peer);
}

// Clicks an element of a list the page re-renders as messages arrive (conversations, members): found and
// clicked in one step in the page, so a re-render between puppeteer's lookup and its click ("Node is
// detached from document") cannot happen.
export async function clickListItem(page, selector) {
  await page.waitForSelector(selector, { timeout: WAIT });
  await page.$eval(selector, (el) => el.click());
}

export async function send(page, text) {
  await page.type('[data-testid=body]', text);
  await page.click('[data-testid=send]');
}

/** Sends a long text without typing it key by key. */
export async function sendPasted(page, text) {
  await page.$eval('[data-testid=body]', (el, t) => (el.value = t), text);
  await page.click('[data-testid=send]');
}

// The bodies shown in the chat view.
export function bodies(page) {
  return page.$$eval('[data-testid=message] .body', (els) => els.map((e) => e.textContent));
}

export async function waitForBodies(page, expected) {
  await page.waitForFunction(
    (want) => {
      const got = [...document.querySelectorAll('[data-testid=message] .body')].map((e) => e.textContent);
      return want.every((w) => got.includes(w));
    },
    { timeout: WAIT },
    expected,
  );
}

export function conversationItem(peer) {
  return `[data-testid=conversation][data-peer="${peer}"]`;
}

export function unreadOf(page, peer) {
  return page.$eval(`${conversationItem(peer)} [data-testid=unread]`, (b) => b.textContent);
}

export function waitForUnread(page, peer, count) {
  return page.waitForFunction(
    (sel, n) => document.querySelector(`${sel} [data-testid=unread]`)?.textContent === n,
    { timeout: WAIT },
    conversationItem(peer),
    count,
  );
}

/** Whether an element takes room on the screen (displayed, with a size). */
export function shown(page, selector) {
  return page.$eval(selector, (el) => {
    const r = el.getBoundingClientRect();
    return getComputedStyle(el).display !== 'none' && r.width > 0 && r.height > 0;
  });
}
