#!/usr/bin/env python3
"""The before-send hook (docs/webhooks.md "Before send") against a real `qim up`: a local hook server verifies
every request with the published `standardwebhooks` library (PyPI, pinned in tests/api/requirements.txt; not
our code) and answers allow, reject, replace or slowly; each is checked through both doors, the WebSocket
SEND and the server API's POST /v1/messages (the API's answers against docs/api/openapi.yaml), under the
open and the closed policy.

usage: before_send_test.py QIM_BINARY OPENAPI_YAML   (prints "before-send: N passed, M failed")
"""
import base64
import http.server
import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_test import BOUND_S, QIM, Calls, Instance  # noqa: E402  (reads the same argv)
from standardwebhooks import Webhook  # noqa: E402

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
AUTH_SECRET = "before-send-test-secret-0123456789"
SLOW_S = 1.5  # the hook's delay for "slow" bodies; the instances' timeout is far below it


class Hook:
    """A hook on 127.0.0.1: verifies each request's signature with `standardwebhooks`, records it, and
    answers by the body: "spam..." reject, "replace..." replace, "slow..." after SLOW_S, "broken..." 500,
    anything else allow."""

    def __init__(self):
        self.verifier = Webhook(SECRET)
        self.requests = []
        self.bad_signatures = 0
        self.lock = threading.Lock()
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # kept alive, as the gateway's workers expect

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    event = hook.verifier.verify(raw, dict(self.headers.items()))
                except Exception as e:  # noqa: BLE001  (any verification failure is a bad request)
                    with hook.lock:
                        hook.bad_signatures += 1
                    self.answer(400, {"error": str(e)})
                    return
                with hook.lock:
                    hook.requests.append(event)
                body = event["body"]
                if body.startswith("spam"):
                    self.answer(200, {"action": "reject", "reason": "no spam, please"})
                elif body.startswith("replace"):
                    self.answer(200, {"action": "replace", "body": "[replaced] " + body})
                elif body.startswith("slow"):
                    time.sleep(SLOW_S)
                    self.answer(200, {"action": "allow"})
                elif body.startswith("broken"):
                    self.answer(500, {})
                else:
                    self.answer(200, {"action": "allow"})

            def answer(self, status, doc):
                data = json.dumps(doc).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the gateway gave up on a slow answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def asked(self, client_msg_id):
        with self.lock:
            return [r for r in self.requests if r["client_msg_id"] == client_msg_id]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class WsClient:
    """A minimal WebSocket client (RFC 6455: text frames, masked) speaking the protocol's JSON frames."""

    def __init__(self, port, token):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise AssertionError("the gateway closed during the upgrade")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise AssertionError(f"no upgrade: {head!r}")
        self.send({"type": "AUTH", "token": token, "ref": "auth"})
        ok = self.wait(lambda f: f.get("ref") == "auth")
        if ok["type"] != "AUTH_OK":
            raise AssertionError(f"AUTH refused: {ok}")

    def send(self, frame):
        data = json.dumps(frame).encode()
        header = bytes([0x81])
        if len(data) < 126:
            header += bytes([0x80 | len(data)])
        else:
            header += bytes([0x80 | 126]) + len(data).to_bytes(2, "big")
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv_exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise AssertionError("the gateway closed the connection")
            out += chunk
        return out

    def frame(self):
        b0, b1 = self.recv_exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(self.recv_exact(2), "big")
        elif n == 127:
            n = int.from_bytes(self.recv_exact(8), "big")
        payload = self.recv_exact(n)
        return b0 & 0x0F, payload

    def wait(self, pred):
        """The first text frame for which pred holds (others are skipped), within the socket's timeout."""
        while True:
            op, payload = self.frame()
            if op == 0x8:
                raise AssertionError(f"closed by the gateway: {payload!r}")
            if op != 0x1:
                continue
            f = json.loads(payload)
            if pred(f):
                return f

    def send_message(self, ref, to, body):
        self.send({"type": "SEND", "ref": ref, "client_msg_id": ref, "to": to, "body": body})
        return self.wait(lambda f: f.get("ref") == ref)

    def close(self):
        self.sock.close()


def running_port(inst):
    path = os.path.join(inst.dir, "running.json")
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        try:
            return json.load(open(path))["gateway_port"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    raise AssertionError("no running.json")


def start_class_instance(cls, env, keys=(("key", "all"),), hook=None):
    """Starts `qim up` for a test class: cls.inst with `env`, an API key per (attribute, scopes) in `keys`,
    cls.ws_port and cls.conn. On a failure it stops the instance (and closes `hook`) before raising."""
    cls.inst = Instance(env)
    try:
        for attr, scopes in keys:
            setattr(cls, attr, cls.inst.admin("create", "--scopes", scopes, "--label", "test"))
        cls.inst.start()
        cls.ws_port = running_port(cls.inst)
    except BaseException:
        cls.inst.stop()
        if hook is not None:
            hook.close()
        raise
    cls.conn = cls.inst.connection()


def stop_class_instance(cls, hook=None):
    cls.conn.close()
    cls.inst.stop()
    if hook is not None:
        hook.close()


def token(inst, user):
    import subprocess
    out = subprocess.run([QIM, "token", "--user", user, "--device", "d1"], env=inst.env, capture_output=True,
                         text=True, timeout=BOUND_S)
    if out.returncode != 0:
        raise AssertionError(out.stderr)
    return out.stdout.strip()


class HookedInstance(Calls):
    policy = "open"

    @classmethod
    def setUpClass(cls):
        cls.hook = Hook()
        start_class_instance(cls, {"QIM_BEFORE_SEND_URL": f"http://127.0.0.1:{cls.hook.port}/before-send",
                                   "QIM_BEFORE_SEND_SECRET": SECRET, "QIM_BEFORE_SEND_TIMEOUT_MS": "300",
                                   "QIM_BEFORE_SEND_POLICY": cls.policy, "QIM_AUTH_SECRET": AUTH_SECRET},
                             hook=cls.hook)

    @classmethod
    def tearDownClass(cls):
        stop_class_instance(cls, hook=cls.hook)

    def api_send(self, key, body, sender="alice", to="bob"):
        return self.call("POST", "/v1/messages", "/v1/messages", {"from": sender, "to": to, "body": body},
                         headers={"Idempotency-Key": key})

    def history_bodies(self, conversation="d:alice:bob"):
        s, d, _ = self.call("GET", f"/v1/conversations/{conversation}/history",
                            "/v1/conversations/{conversation}/history")
        self.assertEqual(s, 200, d)
        return [m["body"] for m in d["messages"]]

    def ws(self, user="alice"):
        c = WsClient(self.ws_port, token(self.inst, user))
        self.addCleanup(c.close)
        return c

    def check_signed_and_asked(self, client_msg_id, body, sender="alice"):
        asked = self.hook.asked(client_msg_id)
        self.assertGreaterEqual(len(asked), 1, f"the hook was not asked about {client_msg_id}")
        self.assertEqual((asked[0]["conversation"], asked[0]["sender"], asked[0]["body"]),
                         ("d:alice:bob", sender, body))
        self.assertEqual(asked[0]["type"], "message.before_send")
        self.assertEqual(self.hook.bad_signatures, 0)


class BeforeSendOpen(HookedInstance, unittest.TestCase):
    policy = "open"

    def test_api_allow_reject_replace(self):
        s, d, _ = self.api_send("api-allow", "hello through the API")
        self.assertEqual(s, 201, d)
        self.check_signed_and_asked("api-allow", "hello through the API")
        s, d, _ = self.api_send("api-spam", "spam through the API")
        self.assertEqual((s, d["code"], d["detail"]), (403, "REJECTED", "no spam, please"))
        s, d, _ = self.api_send("api-replace", "replace through the API")
        self.assertEqual(s, 201, d)
        self.wait_for("the replaced body in history",
                      lambda: "[replaced] replace through the API" in self.history_bodies())
        bodies = self.history_bodies()
        self.assertIn("hello through the API", bodies)
        self.assertNotIn("spam through the API", bodies)
        self.assertNotIn("replace through the API", bodies)

    def test_ws_allow_reject_replace(self):
        c = self.ws()
        f = c.send_message("ws-allow", "bob", "hello through the socket")
        self.assertEqual(f["type"], "SEND_ACK", f)
        self.check_signed_and_asked("ws-allow", "hello through the socket")
        f = c.send_message("ws-spam", "bob", "spam through the socket")
        self.assertEqual((f["type"], f["code"], f["message"]), ("ERROR", "REJECTED", "no spam, please"))
        f = c.send_message("ws-replace", "bob", "replace through the socket")
        self.assertEqual(f["type"], "SEND_ACK", f)
        self.wait_for("the replaced body in history",
                      lambda: "[replaced] replace through the socket" in self.history_bodies())
        self.assertNotIn("spam through the socket", self.history_bodies())

    def test_slow_or_failing_hook_allows_under_the_open_policy(self):
        s, d, _ = self.api_send("api-slow", "slow through the API")
        self.assertEqual(s, 201, d)
        c = self.ws()
        f = c.send_message("ws-broken", "bob", "broken hook, socket")
        self.assertEqual(f["type"], "SEND_ACK", f)
        self.wait_for("the allowed bodies in history",
                      lambda: {"slow through the API", "broken hook, socket"} <= set(self.history_bodies()))


class BeforeSendClosed(HookedInstance, unittest.TestCase):
    policy = "closed"

    def test_slow_or_failing_hook_refuses_under_the_closed_policy(self):
        s, d, _ = self.api_send("api-slow", "slow through the API")
        self.assertEqual((s, d["code"]), (503, "UNAVAILABLE"), d)
        c = self.ws()
        f = c.send_message("ws-slow", "bob", "slow through the socket")
        self.assertEqual((f["type"], f["code"]), ("ERROR", "UNAVAILABLE"), f)
        f = c.send_message("ws-broken", "bob", "broken hook, socket")
        self.assertEqual((f["type"], f["code"]), ("ERROR", "UNAVAILABLE"), f)
        # A good answer still allows; what was refused was never stored.
        f = c.send_message("ws-allow", "bob", "hello through the socket")
        self.assertEqual(f["type"], "SEND_ACK", f)
        self.wait_for("the allowed body in history",
                      lambda: "hello through the socket" in self.history_bodies())
        bodies = self.history_bodies()
        for refused in ("slow through the API", "slow through the socket", "broken hook, socket"):
            self.assertNotIn(refused, bodies)
        self.assertEqual(self.hook.bad_signatures, 0)


if __name__ == "__main__":
    result = unittest.main(argv=[sys.argv[0], "-v", "BeforeSendOpen", "BeforeSendClosed"], exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"before-send: {result.testsRun - failed - len(result.skipped)} passed, {failed} failed")
    sys.exit(1 if failed or result.testsRun == 0 else 0)
