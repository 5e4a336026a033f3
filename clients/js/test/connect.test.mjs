// Connecting fails clearly (issue 37, item 4): a bad URL at once, nobody listening after connectTimeoutMs
// with the URL and the cause, a refused token as a typed QimAuthError; and the README example prints one
// line for it, not a stack trace.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { QimAuthError, QimClient, QimConnectionError, QimError } from '../dist/index.js';
import { Qim, freePort, user } from './qim.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

test('a URL that is not ws:// or wss:// rejects at once, before any socket is made', async () => {
  for (const url of ['http://127.0.0.1:7400/', '127.0.0.1:7400', '']) {
    let sockets = 0;
    const qim = new QimClient({
      url,
      token: 't',
      connectTimeoutMs: 60_000,
      createSocket: () => {
        sockets++;
        throw new Error('no socket expected');
      },
    });
    await assert.rejects(qim.start(), (e) => {
      assert.ok(e instanceof QimConnectionError, String(e));
      assert.match(e.message, /expected ws:\/\/host:port\/ or wss:\/\/host:port\//);
      return true;
    });
    assert.equal(sockets, 0, url);
    qim.close();
  }
});

test('with nobody listening, start() rejects after connectTimeoutMs naming the URL and the cause, and stops', async () => {
  const url = `ws://127.0.0.1:${await freePort()}/`;
  const qim = new QimClient({ url, token: 't', connectTimeoutMs: 1500, reconnectInitialMs: 50, WebSocket });
  await assert.rejects(qim.start(), (e) => {
    assert.ok(e instanceof QimConnectionError, String(e));
    assert.ok(e.message.startsWith(`could not connect to ${url} within 1500 ms`), e.message);
    assert.match(e.message, /ECONNREFUSED/);
    assert.match(e.message, /is the QIM server running there\?/);
    return true;
  });
  assert.equal(qim.state, 'closed'); // no retry left running (the process can exit)
});

test('a refused token rejects start() with a QimAuthError, and the example prints one line for it', async () => {
  const qim = await new Qim().start();
  try {
    const c = new QimClient({ url: qim.url, token: 'not-a-token', createSocket: qim.socketFactory() });
    await assert.rejects(c.start(), (e) => {
      assert.ok(e instanceof QimAuthError, String(e));
      assert.ok(e instanceof QimError);
      assert.equal(e.code, 'UNAUTHENTICATED');
      return true;
    });
    assert.equal(c.state, 'closed');

    const run = promisify(execFile)(process.execPath, [join(root, 'examples', 'hello.mjs')], {
      env: { ...process.env, QIM_URL: qim.url, QIM_TOKEN: 'not-a-token', QIM_TO: user('bob') },
    });
    await assert.rejects(run, (e) => {
      assert.equal(e.code, 1);
      assert.match(e.stderr, /^qim: UNAUTHENTICATED: token malformed/);
      assert.doesNotMatch(e.stderr, /^\s+at /m); // no stack trace
      return true;
    });
  } finally {
    await qim.destroy();
  }
});
