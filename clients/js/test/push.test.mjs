// Offline push (docs/push.md), Web Push end to end against a real `qim up` with QIM_PUSH=on: a local push
// service (an HTTP server here) receives what the push role sends; each request's body is decrypted with the
// maintained npm `http_ece` library using the subscription's private key (so our RFC 8291 encryption is
// proven interoperable), and its VAPID JWT (RFC 8292) is verified with Node's crypto against the key the
// gateway gave in PUSH_CONFIG. The scenario: an offline device gets exactly one notification for a burst of
// three messages; a connected device none; a muted conversation none; the sender none for their own
// messages; a push service answering 410 unregisters the device (its next message makes no request).
// APNs the same way: a local HTTP/2 server over TLS (a certificate this test makes, trusted by `qim up`
// through QIM_PUSH_CA_FILE) checks each request's path, headers and provider JWT (ES256, verified with the
// .p8 key's public half), and answers 410 for a token it calls unregistered. FCM HTTP v1 too: one local
// server plays the OAuth2 token endpoint (it verifies the service account's RS256 JWT grant) and FCM (it
// checks the bearer token it gave and the v1 message), and answers 404 UNREGISTERED for a dead token.
// With QIM_PUSH_TEST_KAFKA (brokers; QIM_MAILBOX_REDIS and QIM_ROUTING_REDIS set too) the same scenario runs
// against the distributed deployment instead: `qim gateway`, `qim fanout` and `qim push` on Kafka and the
// redis store, the push role reading who is online from the routing Redis, every process sharing one
// VAPID key file.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createECDH, createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import ece from 'http_ece';
import WebSocket from 'ws';
import { QIM_BINARY, Qim, user, waitFor as waitForAt } from './qim.mjs';

const KAFKA = process.env.QIM_PUSH_TEST_KAFKA;
const waitFor = (what, pred) => waitForAt(what, pred, KAFKA ? 60000 : 20000);

// The distributed deployment, as much of it as push needs: `qim fanout` (group decisions; the push role
// follows its position), `qim gateway` (SENDs, PUSH_REGISTER, sessions in the routing Redis) and `qim push`,
// in a namespace of their own. stop() stops `qim push` (it sends its open windows).
class Distributed {
  static AUTH = 'sdk-test-secret-0123456789abcdef';
  constructor({ env }) {
    this.base = mkdtempSync('/tmp/web-push-dist-');
    const ns = `qim_push_${process.pid}_${Date.now()}`;
    const vapid = join(this.base, 'vapid.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', vapid]);
    this.env = {
      ...process.env,
      QIM_LOG_BACKEND: 'kafka',
      QIM_KAFKA_BROKERS: KAFKA,
      QIM_KAFKA_TOPIC_PREFIX: `${ns}.`,
      QIM_MAILBOX_STORE_BACKEND: 'redis',
      QIM_MAILBOX_REDIS_PREFIX: `${ns}:`,
      QIM_ROUTING_REDIS_PREFIX: `${ns}:`,
      QIM_AUTH_SECRET: Distributed.AUTH,
      QIM_LOG_LEVEL: 'warn',
      QIM_PUSH_VAPID_KEY_FILE: vapid,
      ...env,
    };
    this.procs = {};
  }
  async role(name, args) {
    const dir = join(this.base, name);
    const proc = spawn(QIM_BINARY, [name, '--data-dir', dir, '--admin-port', '0', ...args], {
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = { proc, dir, log: '' };
    proc.stdout.on('data', (d) => (p.log += d));
    proc.stderr.on('data', (d) => (p.log += d));
    await waitFor(`qim ${name}`, () => {
      if (proc.exitCode !== null) throw new Error(`qim ${name} exited (${proc.exitCode}):\n${p.log}`);
      const running = join(dir, 'running.json');
      if (!existsSync(running)) return false;
      try {
        const r = JSON.parse(readFileSync(running, 'utf8'));
        if (r.pid !== proc.pid || !(r.admin_port > 0)) return false;
        Object.assign(p, { port: r.gateway_port, adminPort: r.admin_port });
        return true;
      } catch {
        return false;
      }
    });
    this.procs[name] = p;
  }
  async start() {
    await this.role('fanout', []);
    await this.role('gateway', ['--port', '0']);
    await this.role('push', []);
    return this;
  }
  async stopRole(name) {
    const p = this.procs[name];
    delete this.procs[name];
    if (!p || p.proc.exitCode !== null) return;
    const exited = new Promise((r) => p.proc.once('exit', r));
    p.proc.kill('SIGTERM');
    await exited;
  }
  stop() {
    return this.stopRole('push');
  }
  async destroy() {
    for (const name of ['gateway', 'push', 'fanout']) await this.stopRole(name);
    rmSync(this.base, { recursive: true, force: true });
  }
  get url() {
    return `ws://127.0.0.1:${this.procs.gateway.port}/`;
  }
  get adminPort() {
    return this.procs.push.adminPort;
  }
  token(name, device = 'node') {
    return execFileSync(QIM_BINARY, ['token', '--user', name, '--device', device], {
      env: { ...process.env, QIM_AUTH_SECRET: Distributed.AUTH },
    }).toString().trim();
  }
}

const b64u = (buf) => Buffer.from(buf).toString('base64url');

// The push service: records every POST; answers 410 under /gone/.
class PushService {
  constructor() {
    this.requests = [];
    this.server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(req.url.startsWith('/gone/') ? 410 : 201).end();
      });
    });
  }
  async start() {
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.origin = `http://127.0.0.1:${this.server.address().port}`;
  }
  to(path) {
    return this.requests.filter((r) => r.path === path);
  }
  stop() {
    return new Promise((r) => this.server.close(r));
  }
}

// APNs: records every request; 410 {"reason":"Unregistered"} for tokens starting with "dead".
class ApnsService {
  constructor(dir) {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', join(dir, 'apns-key.pem'), '-out', join(dir, 'apns-cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    this.ca = join(dir, 'apns-cert.pem');
    this.requests = [];
    this.server = createSecureServer({ key: readFileSync(join(dir, 'apns-key.pem')), cert: readFileSync(this.ca) });
    this.server.on('stream', (stream, headers) => {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        this.requests.push({ headers, body: Buffer.concat(chunks).toString() });
        const dead = headers[':path'].startsWith('/3/device/dead');
        stream.respond({ ':status': dead ? 410 : 200, 'content-type': 'application/json' });
        stream.end(dead ? JSON.stringify({ reason: 'Unregistered', timestamp: Date.now() }) : '');
      });
    });
  }
  async start() {
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `https://127.0.0.1:${this.server.address().port}`;
  }
  to(token) {
    return this.requests.filter((r) => r.headers[':path'] === `/3/device/${token}`);
  }
  stop() {
    return new Promise((r) => this.server.close(r));
  }
}

// The OAuth2 token endpoint and FCM in one HTTP server.
class FcmService {
  constructor(publicKey) {
    this.publicKey = publicKey;
    this.grants = [];
    this.requests = [];
    this.server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (req.url === '/token') {
          const form = new URLSearchParams(body);
          this.grants.push({ grantType: form.get('grant_type'), assertion: form.get('assertion'), headers: req.headers });
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ access_token: 'ya29.test-access', expires_in: 3599, token_type: 'Bearer' }));
        }
        const message = JSON.parse(body).message;
        this.requests.push({ path: req.url, headers: req.headers, message });
        if (message.token.startsWith('dead')) {
          res.writeHead(404, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: { code: 404, status: 'NOT_FOUND',
            details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } }));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ name: 'projects/qim-test/messages/1' }));
      });
    });
  }
  async start() {
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
  }
  to(token) {
    return this.requests.filter((r) => r.message.token === token);
  }
  stop() {
    return new Promise((r) => this.server.close(r));
  }
}

// A browser's PushSubscription, with the private half the browser would keep.
function subscription(endpoint) {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return {
    ecdh,
    auth,
    json: JSON.stringify({ endpoint, keys: { p256dh: b64u(ecdh.getPublicKey()), auth: b64u(auth) } }),
  };
}

// A raw protocol client (docs/protocol.md): AUTH, then request/answer by ref.
async function connect(qim, name, device) {
  const ws = new WebSocket(qim.url);
  const waiting = new Map();
  let n = 0;
  ws.on('message', (data) => {
    const f = JSON.parse(data.toString());
    if (f.ref && waiting.has(f.ref)) {
      waiting.get(f.ref)(f);
      waiting.delete(f.ref);
    }
  });
  await new Promise((res, rej) => {
    ws.once('open', res);
    ws.once('error', rej);
  });
  const ask = (frame) =>
    new Promise((res) => {
      const ref = `r${++n}`;
      waiting.set(ref, res);
      ws.send(JSON.stringify({ ...frame, ref }));
    });
  const ok = await ask({ type: 'AUTH', token: qim.token(name, device) });
  assert.equal(ok.type, 'AUTH_OK', JSON.stringify(ok));
  const close = () =>
    new Promise((res) => {
      if (ws.readyState === WebSocket.CLOSED) return res();
      ws.once('close', res);
      ws.close();
    });
  return { ask, close };
}

async function metric(qim, name) {
  const text = await (await fetch(`http://127.0.0.1:${qim.adminPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line ? Number(line.split(' ')[1]) : 0;
}

// The VAPID JWT of a request, checked against the advertised key; returns its claims.
function checkVapid(req, vapidKey) {
  const m = /^vapid t=([^,]+), k=(\S+)$/.exec(req.headers.authorization ?? '');
  assert.ok(m, `authorization: ${req.headers.authorization}`);
  assert.equal(m[2], vapidKey, 'k= is the key PUSH_CONFIG gave');
  const [h, c, s] = m[1].split('.');
  assert.deepEqual(JSON.parse(Buffer.from(h, 'base64url')), { typ: 'JWT', alg: 'ES256' });
  const raw = Buffer.from(vapidKey, 'base64url');
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64u(raw.subarray(1, 33)), y: b64u(raw.subarray(33, 65)) },
    format: 'jwk',
  });
  assert.ok(
    verify('sha256', Buffer.from(`${h}.${c}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url')),
    'the VAPID JWT signature verifies',
  );
  return JSON.parse(Buffer.from(c, 'base64url'));
}

const TEAM = 'TEAM123456', KID = 'KEY1234567', TOPIC = 'com.example.qim';
const IPHONE = 'a1'.repeat(32), DEAD_IPHONE = 'dead' + 'b2'.repeat(30);
const PIXEL = 'fcm-pixel:APA91b-token', DEAD_PIXEL = 'dead-fcm:APA91b-token';
let service, apns, apnsKey, fcm, fcmKey, dir, qim;
before(async () => {
  dir = mkdtempSync('/tmp/web-push-');
  service = new PushService();
  await service.start();
  apns = new ApnsService(dir);
  await apns.start();
  // The .p8 an Apple developer account gives: a PKCS#8 P-256 key.
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  apnsKey = pair.publicKey;
  writeFileSync(join(dir, 'AuthKey.p8'), pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  // A service account key file as the Firebase console makes it, its token_uri the local endpoint.
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  fcmKey = rsa.publicKey;
  fcm = new FcmService(rsa.publicKey);
  await fcm.start();
  writeFileSync(join(dir, 'service-account.json'), JSON.stringify({
    type: 'service_account', project_id: 'qim-test', private_key_id: 'kid-0001',
    private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: 'qim-push@qim-test.iam.gserviceaccount.com', client_id: '1', token_uri: `${fcm.url}/token`,
  }));
  qim = new (KAFKA ? Distributed : Qim)({
    env: {
      QIM_PUSH: 'on',
      QIM_PUSH_COLLAPSE_MS: '1500',
      QIM_PUSH_VAPID_SUBJECT: 'mailto:ops@example.com',
      QIM_PUSH_APNS_KEY_FILE: join(dir, 'AuthKey.p8'),
      QIM_PUSH_APNS_KEY_ID: KID,
      QIM_PUSH_APNS_TEAM_ID: TEAM,
      QIM_PUSH_APNS_TOPIC: TOPIC,
      QIM_PUSH_APNS_URL: apns.url,
      QIM_PUSH_CA_FILE: apns.ca,
      QIM_PUSH_FCM_SERVICE_ACCOUNT: join(dir, 'service-account.json'),
      QIM_PUSH_FCM_URL: fcm.url,
    },
  });
  await qim.start();
});
after(async () => {
  await qim?.destroy();
  await service?.stop();
  await apns?.stop();
  await fcm?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
let names;

const where = KAFKA ? 'distributed: Kafka, redis store' : 'qim up';
test(`web push (${where}): one notification per burst to an offline device, none online, muted or own; 410 unregisters`, async () => {
  const alice = user('alice'), bob = user('bob'), carol = user('carol'), dave = user('dave');
  const subs = {
    alice: subscription(`${service.origin}/sub/alice`),
    phone: subscription(`${service.origin}/sub/bob-phone`),
    laptop: subscription(`${service.origin}/sub/bob-laptop`),
    carol: subscription(`${service.origin}/sub/carol`),
    dave: subscription(`${service.origin}/gone/dave`),
  };
  const register = async (c, sub) => {
    const r = await c.ask({ type: 'PUSH_REGISTER', provider: 'webpush', token: sub.json });
    assert.equal(r.type, 'PUSH_REGISTERED', JSON.stringify(r));
  };

  const a = await connect(qim, alice, 'a1');
  const config = await a.ask({ type: 'PUSH_CONFIG' });
  assert.equal(config.type, 'PUSH_CONFIG');
  assert.deepEqual(config.providers, ['webpush', 'apns', 'fcm']);
  const vapidKey = config.vapid_public_key;
  assert.equal(Buffer.from(vapidKey, 'base64url').length, 65);
  // Alice's phone is registered and offline: her own messages must not wake it.
  const aphone = await connect(qim, alice, 'a-phone');
  await register(aphone, subs.alice);
  await aphone.close();
  // The documented refusals.
  assert.equal((await a.ask({ type: 'PUSH_REGISTER', provider: 'gcm', token: 'x' })).code, 'UNKNOWN_PROVIDER');
  assert.equal((await a.ask({ type: 'PUSH_REGISTER', provider: 'webpush', token: '{}' })).code, 'BAD_PUSH_TOKEN');

  const phone = await connect(qim, bob, 'phone');
  await register(phone, subs.phone);
  await phone.close();  // offline from here on
  const iphone = await connect(qim, bob, 'iphone');
  assert.equal((await iphone.ask({ type: 'PUSH_REGISTER', provider: 'apns', token: IPHONE })).type, 'PUSH_REGISTERED');
  await iphone.close();
  const erin = user('erin');
  const e = await connect(qim, erin, 'e1');
  assert.equal((await e.ask({ type: 'PUSH_REGISTER', provider: 'apns', token: DEAD_IPHONE })).type, 'PUSH_REGISTERED');
  await e.close();
  const pixel = await connect(qim, bob, 'pixel');
  assert.equal((await pixel.ask({ type: 'PUSH_REGISTER', provider: 'fcm', token: PIXEL })).type, 'PUSH_REGISTERED');
  await pixel.close();
  const frank = user('frank');
  const f = await connect(qim, frank, 'f1');
  assert.equal((await f.ask({ type: 'PUSH_REGISTER', provider: 'fcm', token: DEAD_PIXEL })).type, 'PUSH_REGISTERED');
  await f.close();
  names = { alice, bob, erin, frank };
  const laptop = await connect(qim, bob, 'laptop');
  await register(laptop, subs.laptop);  // stays connected
  const c = await connect(qim, carol, 'c1');
  await register(c, subs.carol);
  const mute = await c.ask({ type: 'MUTE', conversation: `d:${[alice, carol].sort().join(':')}` });
  assert.equal(mute.type, 'MUTE_OK', JSON.stringify(mute));
  await c.close();
  const d = await connect(qim, dave, 'd1');
  await register(d, subs.dave);
  await d.close();

  // A burst of three to bob, one to carol (muted), one to dave (his push service says 410).
  const sends = ['one', 'two', 'three'].map((body, i) =>
    a.ask({ type: 'SEND', client_msg_id: `b${i}`, to: bob, body }),
  );
  sends.push(a.ask({ type: 'SEND', client_msg_id: 'c0', to: carol, body: 'to carol' }));
  sends.push(a.ask({ type: 'SEND', client_msg_id: 'd0', to: dave, body: 'to dave' }));
  sends.push(a.ask({ type: 'SEND', client_msg_id: 'e0', to: erin, body: 'to erin' }));
  sends.push(a.ask({ type: 'SEND', client_msg_id: 'f0', to: frank, body: 'to frank' }));
  for (const ack of await Promise.all(sends)) assert.equal(ack.type, 'SEND_ACK', JSON.stringify(ack));

  await waitFor('the phone notified, the laptop and carol passed over, dave unregistered', async () => {
    return (
      service.to('/sub/bob-phone').length >= 1 &&
      (await metric(qim, 'qim_push_suppressed_total{reason="online"}')) >= 1 &&
      (await metric(qim, 'qim_push_suppressed_total{reason="muted"}')) >= 1 &&
      (await metric(qim, 'qim_push_unregistered_total')) >= 3
    );
  });
  // Dave's device is unregistered: his next message makes no request.
  assert.equal((await a.ask({ type: 'SEND', client_msg_id: 'd1', to: dave, body: 'again' })).type, 'SEND_ACK');
  assert.equal((await a.ask({ type: 'SEND', client_msg_id: 'e1', to: erin, body: 'again' })).type, 'SEND_ACK');
  assert.equal((await a.ask({ type: 'SEND', client_msg_id: 'f1', to: frank, body: 'again' })).type, 'SEND_ACK');
  await waitFor('every record read', async () => (await metric(qim, 'qim_push_records_total')) >= 10);
  await a.close();
  await laptop.close();
  await qim.stop();  // sends whatever window is still open: every count below is final

  const got = service.to('/sub/bob-phone');
  assert.equal(got.length, 1, 'exactly one notification for the burst');
  const req = got[0];
  assert.equal(req.headers['content-encoding'], 'aes128gcm');
  assert.equal(req.headers.ttl, '86400');
  assert.match(req.headers.topic, /^[A-Za-z0-9_-]{32}$/);
  const claims = checkVapid(req, vapidKey);
  assert.equal(claims.aud, service.origin);
  assert.equal(claims.sub, 'mailto:ops@example.com');
  assert.ok(claims.exp > Date.now() / 1000 && claims.exp <= Date.now() / 1000 + 24 * 3600);
  const payload = JSON.parse(
    ece.decrypt(req.body, { version: 'aes128gcm', privateKey: subs.phone.ecdh, authSecret: b64u(subs.phone.auth) }),
  );
  assert.equal(payload.type, 'message');
  assert.equal(payload.count, 3);
  assert.equal(payload.preview, 'three');
  assert.equal(payload.sender, alice);
  assert.equal(payload.conversation, `d:${[alice, bob].sort().join(':')}`);

  assert.equal(service.to('/sub/bob-laptop').length, 0, 'a connected device gets none');
  assert.equal(service.to('/sub/carol').length, 0, 'a muted conversation makes none');
  assert.equal(service.to('/sub/alice').length, 0, 'none for one\'s own messages');
  assert.equal(service.to('/gone/dave').length, 1, 'after the 410, none');
});

test(`apns (${where}): one HTTP/2 request per burst with the provider JWT, the topic and the collapse id; 410 unregisters`, () => {
  assert.ok(names, 'the scenario above ran');
  const got = apns.to(IPHONE);
  assert.equal(got.length, 1, 'exactly one notification for the burst');
  const h = got[0].headers;
  assert.equal(h[':method'], 'POST');
  assert.equal(h['apns-topic'], TOPIC);
  assert.equal(h['apns-push-type'], 'alert');
  assert.equal(h['apns-priority'], '10');
  assert.match(h['apns-collapse-id'], /^[A-Za-z0-9_-]{32}$/);
  assert.ok(Number(h['apns-expiration']) > Date.now() / 1000);
  const m = /^bearer ([^.]+)\.([^.]+)\.([^.]+)$/.exec(h.authorization ?? '');
  assert.ok(m, `authorization: ${h.authorization}`);
  assert.deepEqual(JSON.parse(Buffer.from(m[1], 'base64url')), { alg: 'ES256', kid: KID });
  const claims = JSON.parse(Buffer.from(m[2], 'base64url'));
  assert.equal(claims.iss, TEAM);
  assert.ok(Math.abs(claims.iat - Date.now() / 1000) < 3600);
  assert.ok(
    verify('sha256', Buffer.from(`${m[1]}.${m[2]}`), { key: apnsKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(m[3], 'base64url')),
    'the provider JWT verifies with the .p8 key',
  );
  const body = JSON.parse(got[0].body);
  assert.equal(body.aps.alert.title, names.alice);
  assert.equal(body.aps.alert.body, 'three');
  assert.equal(body.aps['thread-id'], `d:${[names.alice, names.bob].sort().join(':')}`);
  assert.equal(typeof body.aps.badge, 'number');
  assert.equal(body.qim.count, 3);
  // The same collapse id as Web Push's Topic for the conversation.
  assert.equal(h['apns-collapse-id'], service.to('/sub/bob-phone')[0].headers.topic);
  assert.equal(apns.to(DEAD_IPHONE).length, 1, 'after the 410, none');
});

test(`fcm (${where}): an OAuth2 grant signed RS256, then one v1 message per burst with its collapse key; 404 unregisters`, () => {
  assert.ok(names, 'the scenario above ran');
  assert.ok(fcm.grants.length >= 1, 'the access token was asked for');
  for (const grant of fcm.grants) {
    assert.equal(grant.grantType, 'urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [h, c, s] = grant.assertion.split('.');
    assert.deepEqual(JSON.parse(Buffer.from(h, 'base64url')), { alg: 'RS256', typ: 'JWT', kid: 'kid-0001' });
    const claims = JSON.parse(Buffer.from(c, 'base64url'));
    assert.equal(claims.iss, 'qim-push@qim-test.iam.gserviceaccount.com');
    assert.equal(claims.scope, 'https://www.googleapis.com/auth/firebase.messaging');
    assert.equal(claims.aud, `${fcm.url}/token`);
    assert.equal(claims.exp - claims.iat, 3600);
    assert.ok(verify('sha256', Buffer.from(`${h}.${c}`), fcmKey, Buffer.from(s, 'base64url')), 'the grant verifies');
  }
  // One access token per push thread (decision 119), reused: never more grants than messages.
  assert.ok(fcm.grants.length <= fcm.requests.length, `${fcm.grants.length} grants for ${fcm.requests.length} messages`);

  const got = fcm.to(PIXEL);
  assert.equal(got.length, 1, 'exactly one notification for the burst');
  assert.equal(got[0].path, '/v1/projects/qim-test/messages:send');
  assert.equal(got[0].headers.authorization, 'Bearer ya29.test-access');
  const m = got[0].message;
  assert.deepEqual(m.notification, { title: names.alice, body: 'three' });
  assert.equal(m.data.count, '3');
  assert.equal(m.data.sender, names.alice);
  for (const v of Object.values(m.data)) assert.equal(typeof v, 'string', 'FCM data values are strings');
  assert.equal(m.android.collapse_key, service.to('/sub/bob-phone')[0].headers.topic);
  assert.equal(m.android.priority, 'high');
  assert.equal(fcm.to(DEAD_PIXEL).length, 1, 'after the 404 UNREGISTERED, none');
});
