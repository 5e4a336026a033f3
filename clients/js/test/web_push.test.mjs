// Offline push in the SDK (docs/protocol.md "Push"), frame by frame against a fake server (a scripted socket
// that records what the client sends and answers as the server would): pushConfig, registerPush and
// unregisterPush send the documented frames and resolve with their answers, refusals are typed QimErrors
// with the push codes, a registration is sent again after a reconnect (until unregistered); and the
// browser helper enableWebPush with a stand-in ServiceWorkerRegistration: the VAPID key of PUSH_CONFIG
// decoded into `applicationServerKey`, `userVisibleOnly`, the subscription's JSON as the token, a
// subscription of another key replaced, and each way it fails as a WebPushError with its reason.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { QimClient, QimError, WebPushError, base64UrlToBytes } from '../dist/index.js';

class FakeServer {
  constructor() {
    this.readyState = 0;
    this.sent = [];
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    queueMicrotask(() => {
      this.readyState = 1;
      this.onopen?.({});
    });
  }
  send(text) {
    this.sent.push(JSON.parse(text));
  }
  close() {
    this.readyState = 3;
  }
  push(frame) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  all(type) {
    return this.sent.filter((f) => f.type === type);
  }
  last(type) {
    return this.all(type).at(-1);
  }
  drop() {
    this.readyState = 3;
    this.onclose?.({ code: 1006, reason: 'gone' });
  }
}

async function until(what, pred, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

// The P-256 public key of docs/protocol.md's example (65 bytes, uncompressed point).
const VAPID = 'BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U';

const clients = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

// A client online as bob; every connection answers AUTH and the first SYNC by itself, and `answer(frame)`
// (if it returns a frame) answers the push frames.
async function online(answer = () => null) {
  const servers = [];
  const c = new QimClient({
    url: 'ws://test/',
    token: 't',
    reconnectInitialMs: 5,
    reconnectMaxMs: 10,
    createSocket: () => {
      const s = new FakeServer();
      const send = s.send.bind(s);
      s.send = (text) => {
        send(text);
        const f = JSON.parse(text);
        queueMicrotask(() => {
          if (f.type === 'AUTH')
            s.push({ type: 'AUTH_OK', ref: f.ref, v: 1, user: 'bob', device: 'd', expires_at: 0, delivery: 'hybrid' });
          else if (f.type === 'SYNC')
            s.push({ type: 'SYNC_PAGE', ref: f.ref, entries: [], frontier: '0', trim: '0', more: false, gap_through: null });
          else {
            const a = answer(f);
            if (a) s.push({ ...a, ref: f.ref });
          }
        });
      };
      servers.push(s);
      return s;
    },
  });
  clients.push(c);
  await c.start();
  return { c, server: () => servers.at(-1), servers };
}

// The documented answers (docs/protocol.md "Push").
function pushServer({ config = { providers: ['webpush'], vapid_public_key: VAPID }, refuse = null } = {}) {
  return (f) => {
    if (f.type === 'PUSH_CONFIG') return { type: 'PUSH_CONFIG', ...config };
    if (f.type === 'PUSH_REGISTER')
      return refuse ? { type: 'ERROR', code: refuse, message: `refused: ${refuse}` } : { type: 'PUSH_REGISTERED', provider: f.provider };
    if (f.type === 'PUSH_UNREGISTER') return { type: 'PUSH_UNREGISTERED' };
    return null;
  };
}

// A stand-in ServiceWorkerRegistration: its PushManager records subscribe() and gives a subscription whose
// JSON is a browser's (endpoint, expirationTime, keys).
function registration({ existing = null, fail = null } = {}) {
  const calls = { subscribe: [], unsubscribed: [] };
  const subscription = (key, endpoint) => ({
    endpoint,
    options: { applicationServerKey: key ? new Uint8Array(key).buffer : null },
    toJSON() {
      return { endpoint, expirationTime: null, keys: { p256dh: 'BP256dh-key', auth: 'auth-secret' } };
    },
    async unsubscribe() {
      calls.unsubscribed.push(endpoint);
      return true;
    },
  });
  return {
    calls,
    subscription,
    pushManager: {
      async getSubscription() {
        return existing ? subscription(existing.key, existing.endpoint) : null;
      },
      async subscribe(options) {
        calls.subscribe.push(options);
        if (fail) throw Object.assign(new Error(fail.message), { name: fail.name });
        return subscription(options.applicationServerKey, 'https://push.example.net/send/abc');
      },
    },
  };
}

test('pushConfig, registerPush, unregisterPush: the documented frames and answers', async () => {
  const { c, server } = await online(pushServer());
  const config = await c.pushConfig();
  assert.deepEqual(config.providers, ['webpush']);
  assert.equal(config.vapid_public_key, VAPID);
  const token = '{"endpoint":"https://push.example.net/x","keys":{"p256dh":"p","auth":"a"}}';
  const ok = await c.registerPush('webpush', token);
  assert.equal(ok.type, 'PUSH_REGISTERED');
  assert.equal(ok.provider, 'webpush');
  const sent = server().last('PUSH_REGISTER');
  assert.deepEqual({ provider: sent.provider, token: sent.token }, { provider: 'webpush', token });
  assert.ok(typeof sent.ref === 'string' && sent.ref.length > 0);
  assert.equal((await c.unregisterPush()).type, 'PUSH_UNREGISTERED');
  assert.deepEqual(Object.keys(server().last('PUSH_UNREGISTER')).sort(), ['ref', 'type']);
});

test('PUSH_REGISTER refusals are QimErrors with their codes', async () => {
  for (const code of ['UNKNOWN_PROVIDER', 'BAD_PUSH_TOKEN', 'TOO_MANY_DEVICES']) {
    const { c } = await online(pushServer({ refuse: code }));
    await assert.rejects(c.registerPush('webpush', 'x'), (e) => {
      assert.ok(e instanceof QimError, String(e));
      assert.equal(e.code, code);
      assert.equal(e.retryable, false);
      return true;
    });
  }
});

test('a registration is sent again after a reconnect, and not after unregisterPush', async () => {
  const { c, server, servers } = await online(pushServer());
  await c.registerPush('fcm', 'fcm-token-1');
  server().drop();
  await until('a second connection', () => servers.length === 2 && c.state === 'online');
  await until('PUSH_REGISTER again', () => server().all('PUSH_REGISTER').length === 1);
  assert.deepEqual(
    (({ provider, token }) => ({ provider, token }))(server().last('PUSH_REGISTER')),
    { provider: 'fcm', token: 'fcm-token-1' },
  );
  await c.unregisterPush();
  server().drop();
  await until('a third connection', () => servers.length === 3 && c.state === 'online');
  await c.pushConfig(); // a request after AUTH: anything the client sent at AUTH came before it
  assert.equal(server().all('PUSH_REGISTER').length, 0);
});

test('enableWebPush: the VAPID key as applicationServerKey, userVisibleOnly, the subscription JSON as token', async () => {
  const { c, server } = await online(pushServer());
  const reg = registration();
  const { subscription, registered } = await c.enableWebPush(reg);
  assert.equal(registered.provider, 'webpush');
  assert.equal(reg.calls.subscribe.length, 1);
  const opts = reg.calls.subscribe[0];
  assert.equal(opts.userVisibleOnly, true);
  const key = opts.applicationServerKey;
  assert.equal(key.length, 65);
  assert.equal(key[0], 0x04); // an uncompressed P-256 point
  assert.deepEqual([...key], [...Buffer.from(VAPID, 'base64url')]);
  const sent = server().last('PUSH_REGISTER');
  assert.equal(sent.provider, 'webpush');
  assert.equal(sent.token, JSON.stringify(subscription));
  assert.deepEqual(JSON.parse(sent.token), {
    endpoint: 'https://push.example.net/send/abc',
    expirationTime: null,
    keys: { p256dh: 'BP256dh-key', auth: 'auth-secret' },
  });
});

test('enableWebPush keeps a subscription of the same key and replaces one of another key', async () => {
  const { c } = await online(pushServer());
  const same = registration({ existing: { key: base64UrlToBytes(VAPID), endpoint: 'https://push.example.net/old' } });
  const kept = await c.enableWebPush(same);
  assert.equal(kept.subscription.endpoint, 'https://push.example.net/old');
  assert.equal(same.calls.subscribe.length, 0);
  const other = registration({ existing: { key: new Uint8Array(65).fill(7), endpoint: 'https://push.example.net/stale' } });
  const made = await c.enableWebPush(other);
  assert.deepEqual(other.calls.unsubscribed, ['https://push.example.net/stale']);
  assert.equal(other.calls.subscribe.length, 1);
  assert.equal(made.subscription.endpoint, 'https://push.example.net/send/abc');
});

test('enableWebPush fails as a WebPushError naming why, and sends no PUSH_REGISTER', async () => {
  const reason = async (answer, reg) => {
    const { c, server } = await online(answer);
    try {
      await c.enableWebPush(reg);
      assert.fail('enableWebPush resolved');
    } catch (e) {
      assert.ok(e instanceof WebPushError, String(e));
      assert.equal(server().all('PUSH_REGISTER').length, 0);
      return e.reason;
    }
  };
  assert.equal(await reason(pushServer(), {}), 'unsupported');
  assert.equal(await reason(pushServer({ config: { providers: [], vapid_public_key: null } }), registration()), 'server');
  assert.equal(await reason(pushServer({ config: { providers: ['apns'], vapid_public_key: null } }), registration()), 'server');
  // A server from before push does not know PUSH_CONFIG.
  assert.equal(await reason(() => ({ type: 'ERROR', code: 'UNKNOWN_TYPE', message: "unknown type 'PUSH_CONFIG'" }), registration()), 'server');
  assert.equal(await reason(pushServer(), registration({ fail: { name: 'NotAllowedError', message: 'denied' } })), 'permission');
  assert.equal(
    await reason(pushServer(), registration({ fail: { name: 'AbortError', message: 'Registration failed - push service error' } })),
    'subscribe',
  );
});

test('enableWebPush passes on a refusal of the registration as the QimError', async () => {
  const { c } = await online(pushServer({ refuse: 'TOO_MANY_DEVICES' }));
  await assert.rejects(c.enableWebPush(registration()), (e) => e instanceof QimError && e.code === 'TOO_MANY_DEVICES');
});
