// Attachments in the web chat page (browser.mjs: Debian's Chromium, headless): one context attaches a real
// PNG through the attach button's file input (the upload goes from the browser straight to the object store,
// with its progress bar), the other context shows it inline (its thumbnail, or the image itself), and a file
// as a link with its name and size; an edit of the image's message changes its caption and keeps the image.
// Needs the object store: skipped, saying why, without
// QIM_TEST_S3_ENDPOINT (scripts/test.sh's objstore phase group sets it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { user } from '../test/qim.mjs';
import { WAIT, launch, openChat, removeProfiles, screenshots, signIn, startQim } from './browser.mjs';

const skip = process.env.QIM_TEST_S3_ENDPOINT
  ? false
  : 'no object store: QIM_TEST_S3_ENDPOINT is unset (scripts/test.sh sets it in its objstore phase group)';

// A real PNG: width x height RGB, a gradient (zlib-deflated scanlines, CRCs computed).
function png(width, height) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) {
      raw[row + 1 + x * 3] = (x * 255) / width;
      raw[row + 2 + x * 3] = (y * 255) / height;
      raw[row + 3 + x * 3] = 128;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

let qim;
let browser;
let dir;
before(async () => {
  if (skip) return;
  qim = await startQim({
    env: {
      QIM_S3_ENDPOINT: process.env.QIM_TEST_S3_ENDPOINT,
      QIM_S3_BUCKET: process.env.QIM_TEST_S3_BUCKET,
      QIM_S3_ACCESS_KEY: process.env.QIM_TEST_S3_ACCESS_KEY,
      QIM_S3_SECRET_KEY: process.env.QIM_TEST_S3_SECRET_KEY,
    },
  });
  browser = await launch();
  dir = mkdtempSync('/tmp/web-attach-');
});
after(async () => {
  await browser?.close();
  await qim?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
  removeProfiles();
});

test('one context attaches a PNG and a text file; the other shows the image inline and the file as a link', { skip }, async (t) => {
  const alice = user('alice'), bob = user('bob');
  const origin = `http://127.0.0.1:${qim.port}`;
  const ctxA = await browser.createBrowserContext();
  const ctxB = await browser.createBrowserContext();
  try {
    const a = await signIn(ctxA, 'alice', alice, origin);
    const b = await signIn(ctxB, 'bob', bob, origin);
    await openChat(a, bob);
    await openChat(b, alice);
    const image = join(dir, 'gradient.png');
    writeFileSync(image, png(64, 48));
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'twelve bytes');
    // The upload bar: shown during the upload, its progress at 1 when done (recorded by an observer: the
    // upload of a small file is over before a poll could see it).
    await a.evaluate(() => {
      window.uploadSeen = { shown: false, values: [] };
      const bar = document.getElementById('upload');
      const progress = document.getElementById('upload-progress');
      new MutationObserver(() => (window.uploadSeen.shown ||= !bar.hidden)).observe(bar, { attributes: true });
      new MutationObserver(() => window.uploadSeen.values.push(progress.value)).observe(progress, { attributes: true });
    });
    const input = await a.$('[data-testid=file]');
    await input.uploadFile(image);
    // The sender's own page shows it too once stored.
    await a.waitForSelector('[data-testid=attachment-image] img', { timeout: WAIT });
    // The other context: the image, loaded (decoded by the browser: the bytes came back from the store).
    await b.waitForFunction(
      () => {
        const img = document.querySelector('[data-testid=attachment-image] img');
        return img !== null && img.complete && img.naturalWidth > 0;
      },
      { timeout: WAIT },
    );
    // Hidden once the SEND is acknowledged (which may come after the message is shown).
    await a.waitForFunction(() => document.getElementById('upload').hidden, { timeout: WAIT });
    const seen = await a.evaluate(() => window.uploadSeen);
    assert.equal(seen.shown, true, 'the upload bar was shown');
    assert.equal(seen.values.at(-1), 1, `the progress reached 1: ${JSON.stringify(seen.values)}`);
    const src = await b.$eval('[data-testid=attachment-image] img', (img) => img.src);
    assert.match(src, /^http:\/\/127\.0\.0\.1:\d+\//, 'a presigned URL of the object store');
    // An edit changes the caption and keeps the image (decisions 152, 162): the composer holds the caption
    // (empty here), not the stored body; after Save both sides show the image with the new caption.
    await a.waitForFunction(() => document.querySelector('[data-testid=message].mine')?.dataset.messageId !== '', { timeout: WAIT });
    await a.evaluate(() => {
      const li = document.querySelector('[data-testid=message].mine');
      li.querySelector('[data-testid=message-menu] > summary').click();
      li.querySelector('[data-testid=edit]').click();
    });
    assert.equal(await a.$eval('[data-testid=body]', (i) => i.value), '', 'the composer holds the caption');
    await a.$eval('[data-testid=body]', (i) => (i.value = 'a gradient'));
    await a.click('[data-testid=send]');
    for (const p of [a, b]) {
      await p.waitForFunction(
        () => {
          const li = document.querySelector('[data-testid=message]');
          return (
            li?.querySelector('.body')?.textContent === 'a gradient' &&
            li.querySelector('[data-testid=attachment-image] img') !== null &&
            li.querySelector('[data-testid=edited]') !== null
          );
        },
        { timeout: WAIT },
      );
    }
    await (await a.$('[data-testid=file]')).uploadFile(notes);
    await b.waitForSelector('[data-testid=attachment-file]', { timeout: WAIT });
    const link = await b.$eval('[data-testid=attachment-file]', (el) => el.textContent);
    assert.equal(link, 'notes.txt12 B');
  } catch (e) {
    await screenshots('attachments');
    throw e;
  } finally {
    await ctxA.close();
    await ctxB.close();
  }
});

test('without an object store the page says the server takes no files', async () => {
  const bare = await startQim({ env: { QIM_S3_ENDPOINT: '' } });
  const own = browser ?? (await launch());
  const tmp = mkdtempSync('/tmp/web-attach-bare-');
  const ctx = await own.createBrowserContext();
  try {
    const alice = user('alice'), bob = user('bob');
    const a = await signIn(ctx, 'alice', alice, `http://127.0.0.1:${bare.port}`);
    await openChat(a, bob);
    const file = join(tmp, 'notes.txt');
    writeFileSync(file, 'hi');
    await (await a.$('[data-testid=file]')).uploadFile(file);
    await a.waitForFunction(
      () => document.getElementById('chat-error')?.textContent === 'This server does not take files.',
      { timeout: WAIT },
    );
  } catch (e) {
    await screenshots('attachments-disabled');
    throw e;
  } finally {
    await ctx.close();
    if (own !== browser) await own.close();
    await bare.destroy();
    rmSync(tmp, { recursive: true, force: true });
  }
});
