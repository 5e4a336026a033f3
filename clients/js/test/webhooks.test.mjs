// The event webhook (docs/webhooks.md) against a real `qim up`: a local hook server verifies every request
// with the published `standardwebhooks` library (not our code), and the tests check what it received:
// each message and membership change at least once, in Outbox order per conversation; a hook that is down
// for a while (503, then a closed port) loses nothing and keeps the order; a restart of `qim up` resends
// only what the hook had not acknowledged; a dead letter is listed and replayed by the operator command.
// With QIM_WEBHOOK_TEST_KAFKA (brokers; QIM_MAILBOX_REDIS and QIM_ROUTING_REDIS set too) the same tests run
// against the distributed deployment instead: `qim gateway`, `qim fanout` and `qim webhooks` on Kafka and
// the redis store, the consumer's restart being a restart of `qim webhooks`.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, afterEach, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { QimClient } from '../dist/index.js';
import WebSocket from 'ws';
import { QIM_BINARY, Qim, user, waitFor as waitForAt } from './qim.mjs';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KAFKA = process.env.QIM_WEBHOOK_TEST_KAFKA;
const WAIT = KAFKA ? 60000 : 20000;
const waitFor = (what, pred, ms = WAIT) => waitForAt(what, pred, ms);

// The distributed deployment, as much of it as the webhook needs: `qim gateway` (SENDs into the Outbox),
// `qim fanout` (decides group changes) and `qim webhooks`, on Kafka and the redis store, in a namespace of
// their own. start() starts what is not running; stop() stops `qim webhooks` alone (the consumer's restart).
class Distributed {
  static AUTH = 'sdk-test-secret-0123456789abcdef';
  constructor({ env }) {
    this.base = mkdtempSync('/tmp/web-webhooks-');
    const ns = `qim_wh_${process.pid}_${Date.now()}`;
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
    if (!this.procs.fanout) await this.role('fanout', []);
    if (!this.procs.gateway) await this.role('gateway', ['--port', '0']);
    if (!this.procs.webhooks) await this.role('webhooks', []);
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
    return this.stopRole('webhooks');
  }
  async destroy() {
    for (const name of ['gateway', 'webhooks', 'fanout']) await this.stopRole(name);
    rmSync(this.base, { recursive: true, force: true });
  }
  get url() {
    return `ws://127.0.0.1:${this.procs.gateway.port}/`;
  }
  get adminPort() {
    return this.procs.webhooks.adminPort;
  }
  get dir() {
    return join(this.base, 'webhooks');
  }
  socketFactory() {
    return (u) => new WebSocket(u);
  }
  token(user, device = 'node') {
    return execFileSync(QIM_BINARY, ['token', '--user', user, '--device', device], {
      env: { ...process.env, QIM_AUTH_SECRET: Distributed.AUTH },
    }).toString().trim();
  }
}

const deployment = (options) => (KAFKA ? new Distributed(options) : new Qim(options));
const where = KAFKA ? 'distributed: Kafka, redis store' : 'qim up';

// A hook on 127.0.0.1: `mode` is 'up' (200), 'down' (503) or 'closed' (the port refuses connections).
class Hook {
  constructor() {
    this.verifier = new Webhook(SECRET);
    this.requests = [];  // every request: { status, id, event }
    this.badSignatures = 0;
    this.mode = 'up';
    this.server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        let event;
        try {
          event = this.verifier.verify(raw, req.headers);  // throws unless the signature and timestamp hold
        } catch (e) {
          this.badSignatures += 1;
          res.writeHead(400).end(String(e));
          return;
        }
        const status = this.mode === 'up' ? 200 : 503;
        this.requests.push({ status, id: req.headers['webhook-id'], event });
        res.writeHead(status).end();
      });
    });
  }
  listen(port = 0) {
    return new Promise((res) => this.server.listen(port, '127.0.0.1', () => res(this.server.address().port)));
  }
  async close() {
    this.server.closeAllConnections();
    await new Promise((res) => this.server.close(res));
  }
  acknowledged() {
    return this.requests.filter((r) => r.status === 200);
  }
  // The acknowledged events whose type is `type`, first delivery of each id only, in arrival order.
  firsts(type = 'message.created') {
    const seen = new Set();
    const out = [];
    for (const r of this.acknowledged()) {
      if (r.event.type !== type || seen.has(r.id)) continue;
      seen.add(r.id);
      out.push(r.event);
    }
    return out;
  }
}

const made = [];
afterEach(() => {
  for (const c of made.splice(0)) c.close();
});

function client(qim, name) {
  const c = new QimClient({ url: qim.url, token: () => qim.token(name), createSocket: qim.socketFactory() });
  made.push(c);
  return c;
}

// Every message.created event's body, per conversation, in first-arrival order; and asserts that each
// conversation's events arrived in increasing Outbox position (the order the Outbox holds them).
function perConversation(hook) {
  const out = new Map();
  const last = new Map();
  for (const e of hook.firsts()) {
    const pos = BigInt(e.position.offset);
    const prev = last.get(e.conversation);
    assert.ok(prev === undefined || pos > prev, `${e.conversation}: ${pos} came after ${prev}`);
    last.set(e.conversation, pos);
    if (!out.has(e.conversation)) out.set(e.conversation, []);
    out.get(e.conversation).push(e.data.body);
  }
  return out;
}

describe(`event webhook (${where})`, () => {
  let hook, hookPort, qim;
  before(async () => {
    hook = new Hook();
    hookPort = await hook.listen();
    qim = deployment({
      env: {
        QIM_WEBHOOK_URL: `http://127.0.0.1:${hookPort}/hook`,
        QIM_WEBHOOK_SECRET: SECRET,
        // Short pauses so the test's outage is retried many times within seconds.
        QIM_WEBHOOK_RETRY_INITIAL_MS: '20',
        QIM_WEBHOOK_RETRY_MAX_MS: '200',
        QIM_WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    await qim.start();
  });
  after(async () => {
    await qim?.destroy();
    await hook?.close();
  });

  test('messages and a group creation reach the hook, signed, in order per conversation', async () => {
    const a = user('alice'), b = user('bob'), c = user('carol');
    const alice = client(qim, a);
    await alice.start();
    const sent = { [b]: [], [c]: [] };
    for (let i = 0; i < 10; i++) {
      for (const to of [b, c]) {
        const body = `to ${to} #${i}`;
        sent[to].push(body);
        await alice.send({ to, body });
      }
    }
    const group = await alice.createGroup('webhook team', [b]);
    await waitFor('20 messages and the group at the hook', () =>
      hook.firsts().filter((e) => e.data.sender === a).length >= 20 &&
      hook.firsts('group.created').some((e) => e.data.actor === a));
    const got = perConversation(hook);
    for (const to of [b, c]) {
      const conv = [a, to].sort().join(':');
      assert.deepEqual(got.get(`d:${conv}`), sent[to]);
    }
    const created = hook.firsts('group.created').find((e) => e.data.actor === a);
    assert.equal(created.version, 1);
    assert.equal(created.data.name, 'webhook team');
    assert.deepEqual(created.data.members, [b]);
    assert.equal(`g:${created.data.group}`, created.conversation);
    assert.ok(group);
    assert.equal(hook.badSignatures, 0);
  });

  test('a hook down for a while (503, then a closed port) loses nothing and keeps the order', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a);
    await alice.start();
    const conv = `d:${[a, b].sort().join(':')}`;
    const sent = [];
    const send = async (n) => {
      for (let i = 0; i < n; i++) {
        const body = `m${sent.length}`;
        sent.push(body);
        await alice.send({ to: b, body });
      }
    };
    await send(3);
    await waitFor('the first 3', () => (perConversation(hook).get(conv) ?? []).length === 3);
    hook.mode = 'down';
    const failedBefore = hook.requests.filter((r) => r.status === 503).length;
    await send(5);
    await waitFor('retries against 503', () => hook.requests.filter((r) => r.status === 503).length >= failedBefore + 5);
    await hook.close();  // connection refused now
    await send(5);
    await new Promise((r) => setTimeout(r, 1000));  // a second of refused connections (not a synchronisation)
    hook.mode = 'up';
    await hook.listen(hookPort);
    await waitFor('all 13 after the outage', () => (perConversation(hook).get(conv) ?? []).length === 13, 2 * WAIT);
    assert.deepEqual(perConversation(hook).get(conv), sent);
    const metrics = await (await fetch(`http://127.0.0.1:${qim.adminPort}/metrics`)).text();
    assert.match(metrics, /^qim_webhook_failed_attempts_total [1-9]\d*$/m);
    assert.equal(hook.badSignatures, 0);
  });

  test('a restart resends only what the hook had not acknowledged', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a);
    await alice.start();
    const conv = `d:${[a, b].sort().join(':')}`;
    for (let i = 0; i < 4; i++) await alice.send({ to: b, body: `acked${i}` });
    await waitFor('4 acknowledged', () => (perConversation(hook).get(conv) ?? []).length === 4);
    hook.mode = 'down';
    for (let i = 0; i < 3; i++) await alice.send({ to: b, body: `pending${i}` });
    await waitFor('a refused attempt of pending0', () =>
      hook.requests.some((r) => r.status === 503 && r.event.data?.body === 'pending0'));
    alice.close();
    await qim.stop();
    const ackedIds = new Set(hook.acknowledged().filter((r) => r.event.conversation === conv).map((r) => r.id));
    const before = hook.requests.length;
    hook.mode = 'up';
    await qim.start();
    await waitFor('the 3 pending after the restart', () => (perConversation(hook).get(conv) ?? []).length === 7, 2 * WAIT);
    assert.deepEqual(perConversation(hook).get(conv),
      ['acked0', 'acked1', 'acked2', 'acked3', 'pending0', 'pending1', 'pending2']);
    const resent = hook.requests.slice(before).filter((r) => ackedIds.has(r.id));
    assert.deepEqual(resent, [], 'events acknowledged before the restart were sent again');
    assert.equal(hook.badSignatures, 0);
  });
});

describe(`event webhook dead letters (${where})`, () => {
  let hook, qim;
  before(async () => {
    hook = new Hook();
    const port = await hook.listen();
    qim = deployment({
      env: {
        QIM_WEBHOOK_URL: `http://127.0.0.1:${port}/hook`,
        QIM_WEBHOOK_SECRET: SECRET,
        QIM_WEBHOOK_RETRY_INITIAL_MS: '20',
        QIM_WEBHOOK_RETRY_MAX_MS: '50',
        QIM_WEBHOOK_RETRY_FOR_MS: '300',  // dead-lettered after 0.3 s of failures
      },
    });
    await qim.start();
  });
  after(async () => {
    await qim?.destroy();
    await hook?.close();
  });

  const qimCommand = async (...args) =>
    (await promisify(execFile)(QIM_BINARY, ['webhooks', 'dead-letters', ...args, '--data-dir', qim.dir])).stdout;

  test('an event past its retry time is listed, then replayed with its id by `qim webhooks dead-letters`', async () => {
    const a = user('alice'), b = user('bob');
    const alice = client(qim, a);
    await alice.start();
    hook.mode = 'down';
    await alice.send({ to: b, body: 'given up' });
    await waitFor('the dead letter', async () => /message\.created attempts=\d+ .* pending/.test(await qimCommand('list')));
    const failedId = hook.requests.find((r) => r.event.data?.body === 'given up').id;
    assert.match(await qimCommand('list'), new RegExp(`^0 ${failedId} message\\.created `, 'm'));
    hook.mode = 'up';
    await alice.send({ to: b, body: 'after it' });  // the partition moved on
    await waitFor('the next event', () => hook.firsts().some((e) => e.data.body === 'after it'));
    assert.equal(hook.acknowledged().filter((r) => r.id === failedId).length, 0);
    assert.match(await qimCommand('replay'), /^replayed 1; replay cursor at 1; 0 pending$/m);
    const replayed = hook.acknowledged().filter((r) => r.id === failedId);
    assert.equal(replayed.length, 1);
    assert.equal(replayed[0].event.data.body, 'given up');
    assert.match(await qimCommand('list'), / replayed error=/);
    assert.match(await qimCommand('replay'), /^replayed 0; replay cursor at 1; 0 pending$/m);
    const metrics = await (await fetch(`http://127.0.0.1:${qim.adminPort}/metrics`)).text();
    assert.match(metrics, /^qim_webhook_dead_lettered_total 1$/m);
    assert.match(metrics, /^qim_webhook_replayed_total 1$/m);
    assert.equal(hook.badSignatures, 0);
  });
});
