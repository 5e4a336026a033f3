// A real `qim up` for the SDK's tests: its own data directory under /tmp/web-sdk-*, its own free port
// (read back from running.json), tokens from `qim token`. QIM_BINARY names the binary (default: the
// release build of this checkout).
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { MAX_FRAME_BYTES, QimClient } from '../dist/index.js';

// Every client a test file starts is closed when the file's tests are done, passed or failed: a test that
// fails between start() and close() would otherwise leave a client reconnecting to a stopped `qim up` for
// ever, and the file's process (so `node --test`) would never exit.
const started = new Set();
const start = QimClient.prototype.start;
QimClient.prototype.start = function (...args) {
  started.add(this);
  return start.apply(this, args);
};
after(() => {
  for (const c of started) c.close();
  started.clear();
});

const here = dirname(fileURLToPath(import.meta.url));
export const QIM_BINARY = process.env.QIM_BINARY ?? resolve(here, '../../../build/release/src/app/qim');
const SECRET = 'sdk-test-secret-0123456789abcdef';

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

export async function waitFor(what, pred, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await pred()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export class Qim {
  constructor({ tls = false, port = 0, env = {} } = {}) {
    if (!existsSync(QIM_BINARY)) throw new Error(`no qim binary at ${QIM_BINARY}: build it, or set QIM_BINARY`);
    this.dir = mkdtempSync('/tmp/web-sdk-');
    this.tls = tls;
    this.fixedPort = port;
    this.env = env;
    this.proc = null;
  }
  async start() {
    const args = ['up', '--data-dir', this.dir, '--port', String(this.fixedPort), '--admin-port', '0'];
    if (this.tls) args.push('--dev-tls');
    this.log = '';
    this.proc = spawn(QIM_BINARY, args, {
      env: { ...process.env, QIM_AUTH_SECRET: SECRET, QIM_LOG_LEVEL: 'warn', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc.stdout.on('data', (d) => (this.log += d));
    this.proc.stderr.on('data', (d) => (this.log += d));
    const proc = this.proc;
    const running = join(this.dir, 'running.json');
    await waitFor(`qim up in ${this.dir}`, () => {
      if (proc.exitCode !== null) throw new Error(`qim up exited (${proc.exitCode}):\n${this.log}`);
      if (!existsSync(running)) return false;
      try {
        const r = JSON.parse(readFileSync(running, 'utf8'));
        if (r.pid !== proc.pid || !(r.gateway_port > 0)) return false;
        this.port = r.gateway_port;
        this.adminPort = r.admin_port;
        return true;
      } catch {
        return false;
      }
    });
    return this;
  }
  get url() {
    return `${this.tls ? 'wss' : 'ws'}://127.0.0.1:${this.port}/`;
  }
  get ca() {
    return readFileSync(join(this.dir, 'tls', 'dev-cert.pem'));
  }
  /**
   * How the SDK's tests make sockets: `ws`, trusting the dev certificate over TLS, refusing frames over the
   * documented maximum (as the C++ client does), so a server frame over it fails the tests.
   */
  socketFactory() {
    const ca = this.tls ? this.ca : undefined;
    return (u) => new WebSocket(u, { maxPayload: MAX_FRAME_BYTES, ...(ca ? { ca } : {}) });
  }
  token(user, device = 'node') {
    return execFileSync(QIM_BINARY, ['token', '--user', user, '--device', device], {
      env: { ...process.env, QIM_AUTH_SECRET: SECRET },
    })
      .toString()
      .trim();
  }
  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    const proc = this.proc;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  async destroy() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

let serial = 0;
/** A user name unique to this run. */
export function user(name) {
  return `${name}_${process.pid}_${++serial}`;
}

// Runs the README example (`script`, from `cwd`) as alice sending to bob against `qim`, and checks that it
// reports the stored message and that a fresh reader, bob, receives it. Returns alice's and bob's names.
export async function runExampleAndReceive(qim, script, cwd = undefined) {
  const a = user('alice'), b = user('bob');
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    cwd,
    env: { ...process.env, QIM_URL: qim.url, QIM_TOKEN: qim.token(a), QIM_TO: b },
  });
  assert.match(stdout, /^stored as \d+ in d:/m);
  const bob = new QimClient({ url: qim.url, token: qim.token(b), createSocket: qim.socketFactory() });
  const got = [];
  bob.on('message', (m) => got.push(m));
  await bob.start();
  await waitFor('bob', () => got.length >= 1);
  bob.close();
  assert.equal(got[0].body, 'hello from the SDK');
  return { sender: got[0].sender, alice: a };
}
