#!/usr/bin/env python3
"""The server API against a real `qim up` (docs/api.md): every endpoint and every documented refusal, each
answer checked against docs/api/openapi.yaml with the maintained validators (openapi-spec-validator for the
document, openapi-schema-validator for the answers; tests/api/requirements.txt, scripts/install-deps.sh).

usage: api_test.py QIM_BINARY OPENAPI_YAML        (prints "api: N passed, M failed"; exit 1 on a failure)
"""
import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import yaml
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec

QIM = os.path.abspath(sys.argv[1])
SPEC_PATH = os.path.abspath(sys.argv[2])
SPEC = yaml.safe_load(open(SPEC_PATH))
BOUND_S = 60  # every wait below is bounded by this


class Instance:
    """A `qim up` on port 0 with the server API on port 0, in a data directory of its own."""

    def __init__(self, extra_env=None, flags=()):
        self.dir = tempfile.mkdtemp(prefix="qim-api-test-")
        self.env = dict(os.environ, QIM_DATA_DIR=self.dir, QIM_API_LISTEN="127.0.0.1:0",
                        QIM_API_MAX_REQUEST_BYTES="4096", QIM_GATEWAY_MAX_BODY_BYTES="1000",
                        QIM_LOG_LEVEL="warn")
        for k in ("QIM_API_KEYS_FILE", "QIM_TLS_CERT", "QIM_TLS_KEY", "QIM_AUTH_SECRET"):
            self.env.pop(k, None)
        self.env.update(backend_env())
        self.env.update(extra_env or {})
        self.flags = list(flags)
        self.proc = None
        self.port = None
        self.scheme = "http"

    def admin(self, *args):
        out = subprocess.run([QIM, "admin", "api-key", *args, "--data-dir", self.dir], env=self.env,
                             capture_output=True, text=True, timeout=BOUND_S)
        if out.returncode != 0:
            raise AssertionError(f"qim admin api-key {args}: {out.stderr}")
        return out.stdout.strip()

    def start(self):
        self.proc = subprocess.Popen([QIM, "up", "--port", "0", "--admin-port", "0", *self.flags], env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        found = {}

        def read():
            for line in self.proc.stdout:
                m = re.search(r"server API\s+(https?)://[0-9.]+:(\d+)/v1/", line)
                if m:
                    found["scheme"], found["port"] = m.group(1), int(m.group(2))
                    return

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(BOUND_S)
        if "port" not in found:
            self.stop()
            raise AssertionError("qim up printed no 'server API' line within the bound")
        self.scheme, self.port = found["scheme"], found["port"]
        # Drain the rest of stdout so the process never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(BOUND_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def connection(self, context=None):
        if self.scheme == "https":
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=BOUND_S, context=context)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=BOUND_S)


SERIAL = [0]


def backend_env():
    """The mailbox store of the e2e phase that runs this (QIM_E2E_BACKEND; embedded when unset), in a
    namespace of its own (a remote store is shared by the phase's processes)."""
    SERIAL[0] += 1
    ns = f"qim_api_{os.getpid()}_{SERIAL[0]}"
    return {"QIM_MAILBOX_STORE_BACKEND": os.environ.get("QIM_E2E_BACKEND") or "embedded",
            "QIM_MAILBOX_REDIS_PREFIX": ns + ":", "QIM_CQL_KEYSPACE": ns, "QIM_KAFKA_TOPIC_PREFIX": ns + ".",
            "QIM_ROUTING_REDIS_PREFIX": ns + ":"}


class Distributed:
    """The distributed deployment (as tests/e2e/deployment.cc starts it): Kafka for the logs, one MailboxNode
    owning every shard, fanout, the archiver and two gateways, each serving the server API with one key file
    (QIM_API_KEYS_FILE) and one send idempotency table (the routing Redis)."""

    ROLES = [("mailbox", "mailbox"), ("archiver", "archiver"), ("fanout", "fanout"),
             ("gateway", "gateway-1"), ("gateway", "gateway-2")]

    def __init__(self, extra_env=None):
        self.dir = tempfile.mkdtemp(prefix="qim-api-dist-")
        self.keys_file = os.path.join(self.dir, "api-keys")
        self.env = dict(os.environ, QIM_LOG_BACKEND="kafka", QIM_SHARDS="16", QIM_AUTH_SECRET="api-test-secret",
                        QIM_API_KEYS_FILE=self.keys_file, QIM_LOG_LEVEL="warn", QIM_API_RATE="1000",
                        QIM_API_BURST="1000")
        for k in ("QIM_TLS_CERT", "QIM_TLS_KEY", "QIM_API_LISTEN"):
            self.env.pop(k, None)
        self.env.update(backend_env())
        self.env.update(extra_env or {})
        self.procs = []
        self.ports = []

    def admin(self, *args):
        out = subprocess.run([QIM, "admin", "api-key", *args], env=self.env, capture_output=True, text=True,
                             timeout=BOUND_S)
        if out.returncode != 0:
            raise AssertionError(f"qim admin api-key {args}: {out.stderr}")
        return out.stdout.strip()

    def start(self):
        ns = self.env["QIM_KAFKA_TOPIC_PREFIX"].rstrip(".")
        for role, name in self.ROLES:
            data = os.path.join(self.dir, name)
            os.makedirs(data)
            env = dict(self.env, QIM_DATA_DIR=data, QIM_ADMIN_PORT="0")
            if role == "mailbox":
                env.update(QIM_NODE_ID=ns + "-node", QIM_OWNED_SHARDS="0-15")
            if role == "gateway":
                env.update(QIM_GATEWAY_ID=f"{ns}-{name}", QIM_GATEWAY_PORT="0", QIM_API_LISTEN="127.0.0.1:0")
            log = open(os.path.join(data, "qim.log"), "w")
            p = subprocess.Popen([QIM, role], env=env, stdout=subprocess.PIPE, stderr=log, text=True)
            log.close()  # the child has its own descriptor
            self.procs.append(p)
            found = {}

            def read(p=p, found=found, role=role):
                for line in p.stdout:
                    m = re.search(r"server API\s+http://[0-9.]+:(\d+)/v1/", line)
                    if m:
                        found["port"] = int(m.group(1))
                    if "is running" in line and role != "gateway":
                        found["up"] = True
                    if "port" in found or "up" in found:
                        return

            t = threading.Thread(target=read, daemon=True)
            t.start()
            t.join(BOUND_S * 2)
            if not found:
                self.stop()
                raise AssertionError(f"qim {role} ({name}) did not start within the bound; see {data}/qim.log")
            threading.Thread(target=lambda p=p: [None for _ in p.stdout], daemon=True).start()
            if "port" in found:
                self.ports.append(found["port"])

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(BOUND_S)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            p.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def response_schema(path_template, method, status, content_type):
    """The document's schema for this answer (with the components beside it for $ref), or fail."""
    op = SPEC["paths"][path_template][method.lower()]
    resp = op["responses"].get(str(status))
    if resp is None:
        raise AssertionError(f"{method} {path_template}: status {status} is not in the document")
    if "$ref" in resp:
        resp = SPEC["components"]["responses"][resp["$ref"].split("/")[-1]]
    media = content_type.split(";")[0].strip()
    if media not in resp["content"]:
        raise AssertionError(f"{method} {path_template} {status}: media type {media} is not in the document")
    return resp["content"][media]["schema"]


def check_against(schema, body):
    OAS31Validator(dict(schema, components=SPEC["components"])).validate(body)


class Calls:
    """One request and its answer checked against the document; a bounded wait."""

    def call(self, method, path, template, body=None, key=None, headers=None, raw=None, conn=None):
        """One request; the answer checked against the document (template: the path's entry, or None for
        a route the document does not have, whose answer must be a Problem)."""
        h = dict(headers or {})
        k = self.key if key is None else key
        if k:
            h["Authorization"] = "Bearer " + k
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        if data is not None:
            h["Content-Type"] = "application/json"
        c = conn or self.conn
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        payload = r.read()
        ctype = r.getheader("Content-Type", "")
        doc = json.loads(payload)
        if template is None:
            self.assertEqual(ctype, "application/problem+json")
            check_against({"$ref": "#/components/schemas/Problem"}, doc)
        else:
            check_against(response_schema(template, method, r.status, ctype), doc)
        if r.status >= 400:
            self.assertEqual(ctype, "application/problem+json")
            self.assertEqual(doc["status"], r.status)
        return r.status, doc, r

    def wait_for(self, what, fn):
        deadline = time.monotonic() + BOUND_S
        while True:
            got = fn()
            if got:
                return got
            if time.monotonic() > deadline:
                self.fail(f"{what}: not within {BOUND_S} s")
            time.sleep(0.05)


class Api(Calls, unittest.TestCase):
    inst = None

    @classmethod
    def setUpClass(cls):
        cls.inst = Instance()
        try:
            cls.key = cls.inst.admin("create", "--scopes", "all", "--label", "test")
            cls.read_key = cls.inst.admin("create", "--scopes", "read")
            cls.doomed_key = cls.inst.admin("create", "--scopes", "all", "--label", "revoked-later")
            cls.inst.start()
        except BaseException:
            cls.inst.stop()  # tearDownClass does not run after a failed setUpClass
            raise
        cls.conn = cls.inst.connection()

    @classmethod
    def tearDownClass(cls):
        cls.conn.close()
        cls.inst.stop()

    # --- the document

    def test_00_document_is_valid_openapi_3_1(self):
        validate_spec(SPEC)
        self.assertEqual(SPEC["openapi"], "3.1.0")

    # --- tokens

    def test_tokens_mint(self):
        s, d, _ = self.call("POST", "/v1/tokens", "/v1/tokens", {"user": "alice", "device": "phone", "ttl_seconds": 60})
        self.assertEqual(s, 201)
        self.assertEqual((d["user"], d["device"]), ("alice", "phone"))
        self.assertRegex(d["token"], r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")
        s, d, _ = self.call("POST", "/v1/tokens", "/v1/tokens", {"user": "bad:name"})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))

    def test_sessions_devices_and_revoke(self):
        # The SessionService qim admin sessions calls (e2e R01-R04 show the sockets closed): a device's and
        # a user's revocation recorded, and seen in the device list.
        s, d, _ = self.call("GET", "/v1/users/rita/devices", "/v1/users/{user}/devices")
        self.assertEqual((s, d["user"], d["not_before"]), (200, "rita", 0))
        s, d, _ = self.call("DELETE", "/v1/users/rita/devices/phone/sessions",
                            "/v1/users/{user}/devices/{device}/sessions")
        self.assertEqual((s, d["user"], d["device"]), (200, "rita", "phone"))
        self.assertGreater(d["not_before"], 0)
        device_mark = d["not_before"]
        s, d, _ = self.call("GET", "/v1/users/rita/devices", "/v1/users/{user}/devices")
        self.assertEqual(s, 200)
        phone = [x for x in d["devices"] if x["device"] == "phone"]
        self.assertEqual(len(phone), 1, d)
        self.assertEqual(phone[0]["not_before"], device_mark)
        s, d, _ = self.call("DELETE", "/v1/users/rita/sessions", "/v1/users/{user}/sessions")
        self.assertEqual(s, 200)
        self.assertNotIn("device", d)
        s, d, _ = self.call("GET", "/v1/users/rita/devices", "/v1/users/{user}/devices")
        self.assertGreaterEqual(d["not_before"], device_mark)
        s, d, _ = self.call("DELETE", "/v1/users/bad:name/sessions", "/v1/users/{user}/sessions")
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        s, d, _ = self.call("GET", "/v1/users/rita/devices", "/v1/users/{user}/devices", key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))

    def test_tokens_expect_continue(self):
        # A client that sends "Expect: 100-continue" (curl, for large bodies) is told to go on at once.
        import socket
        body = json.dumps({"user": "alice"}).encode()
        with socket.create_connection(("127.0.0.1", self.inst.port), timeout=BOUND_S) as sock:
            sock.sendall(b"POST /v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + self.key.encode() +
                         b"\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " +
                         str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n")
            first = sock.recv(64)
            self.assertTrue(first.startswith(b"HTTP/1.1 100 Continue"), first)
            sock.sendall(body)
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
        self.assertIn(b"HTTP/1.1 201 Created", answer)

    # --- push targets (the registry PUSH_REGISTER writes; docs/api.md "Push targets")

    def test_push_targets_register_list_unregister(self):
        base = "/v1/users/paula/push-targets"
        one = "/v1/users/{user}/push-targets/{device}"
        s, d, _ = self.call("GET", base, "/v1/users/{user}/push-targets")
        self.assertEqual((s, d["user"], d["targets"]), (200, "paula", []))
        s, d, _ = self.call("PUT", base + "/phone", one, {"provider": "fcm", "token": "fcm-token-1"})
        self.assertEqual((s, d["device"], d["provider"]), (200, "phone", "fcm"), d)
        self.assertGreater(d["registered_at"], 0)
        s, d, _ = self.call("PUT", base + "/tablet", one, {"provider": "apns", "token": "ab" * 32})
        self.assertEqual(s, 200, d)
        s, d, _ = self.call("GET", base, "/v1/users/{user}/push-targets")
        self.assertEqual(s, 200)
        self.assertEqual(sorted((t["device"], t["provider"]) for t in d["targets"]),
                         [("phone", "fcm"), ("tablet", "apns")])
        self.assertNotIn("token", d["targets"][0])
        # A new registration of the device replaces its target.
        s, d, _ = self.call("PUT", base + "/phone", one, {"provider": "apns", "token": "cd" * 32})
        self.assertEqual((s, d["provider"]), (200, "apns"))
        s, d, _ = self.call("DELETE", base + "/phone", one)
        self.assertEqual((s, d["device"], d["registered"]), (200, "phone", False))
        s, d, _ = self.call("DELETE", base + "/never", one)  # nothing registered: still done
        self.assertEqual(s, 200)
        s, d, _ = self.call("GET", base, "/v1/users/{user}/push-targets")
        self.assertEqual([t["device"] for t in d["targets"]], ["tablet"])

    def test_push_targets_refusals(self):
        base = "/v1/users/quinn/push-targets"
        one = "/v1/users/{user}/push-targets/{device}"
        s, d, _ = self.call("PUT", base + "/d", one, {"provider": "pigeon", "token": "x"})
        self.assertEqual((s, d["code"]), (400, "UNKNOWN_PROVIDER"))
        s, d, _ = self.call("PUT", base + "/d", one, {"provider": "apns", "token": "not hex"})
        self.assertEqual((s, d["code"]), (400, "BAD_PUSH_TOKEN"))
        s, d, _ = self.call("PUT", base + "/d", one, {"provider": "webpush", "token": "{}"})
        self.assertEqual((s, d["code"]), (400, "BAD_PUSH_TOKEN"))
        s, d, _ = self.call("PUT", base + "/d", one, {"provider": "fcm"})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        s, d, _ = self.call("PUT", base + "/d", one, {"provider": "fcm", "token": "t", "extra": 1})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        s, d, _ = self.call("PUT", base + "/bad:device", one, {"provider": "fcm", "token": "t"})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        for i in range(10):
            s, d, _ = self.call("PUT", f"{base}/d{i}", one, {"provider": "fcm", "token": f"t{i}"})
            self.assertEqual(s, 200, d)
        s, d, _ = self.call("PUT", base + "/d10", one, {"provider": "fcm", "token": "t10"})
        self.assertEqual((s, d["code"]), (409, "TOO_MANY_DEVICES"))
        s, d, _ = self.call("PUT", base + "/d3", one, {"provider": "fcm", "token": "again"})  # a replacement
        self.assertEqual(s, 200, d)
        # Scope tokens: a read-only key is refused on every push target route.
        s, d, _ = self.call("GET", base, "/v1/users/{user}/push-targets", key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.call("PUT", base + "/d1", one, {"provider": "fcm", "token": "t"}, key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.call("DELETE", base + "/d1", one, key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.call("POST", base + "/d1", None, {"provider": "fcm", "token": "t"})
        self.assertEqual((s, d["code"]), (405, "NOT_FOUND"))

    # --- messages

    def test_send_idempotent(self):
        body = {"from": "alice", "to": "bob", "body": "hello bob"}
        s1, d1, _ = self.call("POST", "/v1/messages", "/v1/messages", body, headers={"Idempotency-Key": "order-1"})
        self.assertEqual(s1, 201)
        self.assertEqual((d1["conversation"], d1["client_msg_id"], d1["duplicate"]), ("d:alice:bob", "order-1", False))
        s2, d2, _ = self.call("POST", "/v1/messages", "/v1/messages", body, headers={"Idempotency-Key": "order-1"})
        self.assertEqual(s2, 200)
        self.assertTrue(d2["duplicate"])
        self.assertEqual(d2["message_id"], d1["message_id"])
        s3, d3, _ = self.call("POST", "/v1/messages", "/v1/messages", dict(body, body="other"),
                              headers={"Idempotency-Key": "order-1"})
        self.assertEqual((s3, d3["code"]), (409, "INVALID_ARGUMENT"))
        # The history holds it once (the archiver follows the Outbox: waited for with a bound).
        def history():
            s, d, _ = self.call("GET", "/v1/conversations/d:alice:bob/history?limit=50",
                                "/v1/conversations/{conversation}/history")
            self.assertEqual(s, 200)
            return [m for m in d["messages"] if m["client_msg_id"] == "order-1"]
        got = self.wait_for("the message in the history", history)
        self.assertEqual(len(got), 1)
        self.assertEqual((got[0]["body"], got[0]["sender"]), ("hello bob", "alice"))
        # And bob's conversation list shows it (the inbox follows the mailbox).
        def listed():
            s, d, _ = self.call("GET", "/v1/users/bob/conversations?limit=10", "/v1/users/{user}/conversations")
            self.assertEqual(s, 200)
            return [c for c in d["conversations"] if c["conversation"] == "d:alice:bob"]
        item = self.wait_for("the conversation in bob's list", listed)[0]
        self.assertEqual(item["peer"], "alice")

    def test_send_as_system_and_refusals(self):
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"to": "alice", "body": "welcome"})
        self.assertEqual(s, 201)
        self.assertEqual(d["conversation"], "d:alice:system")
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages",
                            {"from": "alice", "conversation": "d:bob:carol", "body": "x"})
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "body": "nowhere"})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "bob", "body": 5})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        # The SEND frame's bounds: an Idempotency-Key is a client_msg_id (64 bytes at most), a message body at
        # most QIM_GATEWAY_MAX_BODY_BYTES (1000 here; the request itself may be 4096).
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "bob", "body": "x"},
                            headers={"Idempotency-Key": "k" * 65})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        self.assertIn("Idempotency-Key", d["detail"])
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "bob", "body": "x" * 2000})
        self.assertEqual((s, d["code"]), (413, "TOO_LARGE"))


    # --- groups

    def test_groups(self):
        s, d, _ = self.call("POST", "/v1/groups", "/v1/groups", {"actor": "alice", "name": "order 42", "members": ["bob"]})
        self.assertEqual(s, 201)
        self.assertEqual(d["op"], "create")
        g = d["group"]
        s, d, _ = self.call("POST", f"/v1/groups/{g}/members", "/v1/groups/{group}/members",
                            {"actor": "alice", "members": ["carol"]})
        self.assertEqual((s, d["op"]), (200, "add"))
        s, d, _ = self.call("PATCH", f"/v1/groups/{g}", "/v1/groups/{group}", {"actor": "alice", "name": "order 42 (paid)"})
        self.assertEqual((s, d["op"]), (200, "rename"))
        s, d, _ = self.call("GET", f"/v1/groups/{g}/members?actor=alice", "/v1/groups/{group}/members")
        self.assertEqual(s, 200)
        self.assertEqual(d["name"], "order 42 (paid)")
        self.assertEqual(sorted(m["user"] for m in d["members"]), ["alice", "bob", "carol"])
        s, d, _ = self.call("DELETE", f"/v1/groups/{g}/members/carol?actor=alice", "/v1/groups/{group}/members/{member}")
        self.assertEqual((s, d["op"]), (200, "remove"))
        # The frames' rules: a plain member may not remove the owner; a removed member may not send.
        s, d, _ = self.call("DELETE", f"/v1/groups/{g}/members/alice?actor=bob", "/v1/groups/{group}/members/{member}")
        self.assertEqual((s, d["code"]), (403, "NOT_ALLOWED"))
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "carol", "conversation": g, "body": "x"})
        self.assertEqual((s, d["code"]), (403, "NOT_A_MEMBER"))
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "bob", "conversation": g, "body": "shipped?"},
                            headers={"Idempotency-Key": "g-1"})
        self.assertEqual(s, 201)
        s, d, _ = self.call("GET", "/v1/users/bob/groups", "/v1/users/{user}/groups")
        self.assertEqual(s, 200)
        self.assertIn(g, [x["group"] for x in d["groups"]])
        s, d, _ = self.call("GET", "/v1/groups/0123456789abcdef0123456789abcdef/members?actor=alice",
                            "/v1/groups/{group}/members")
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_GROUP"))
        s, d, _ = self.call("GET", f"/v1/groups/{g}/members", "/v1/groups/{group}/members")
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))

        def history():
            s, d, _ = self.call("GET", f"/v1/conversations/{g}/history", "/v1/conversations/{conversation}/history")
            self.assertEqual(s, 200)
            return [m for m in d["messages"] if m.get("client_msg_id") == "g-1"]
        self.assertEqual(self.wait_for("the group message in the history", history)[0]["body"], "shipped?")

    # --- refusals every endpoint shares

    def test_refusals_keys(self):
        s, d, _ = self.call("GET", "/v1/users/bob/conversations", "/v1/users/{user}/conversations", key="")
        self.assertEqual((s, d["code"]), (401, "UNAUTHENTICATED"))
        s, d, _ = self.call("GET", "/v1/users/bob/conversations", "/v1/users/{user}/conversations",
                            key="qim_0123456789ab_wrong")
        self.assertEqual((s, d["code"]), (401, "UNAUTHENTICATED"))
        s, d, _ = self.call("GET", "/v1/users/bob/conversations", "/v1/users/{user}/conversations", key=self.doomed_key)
        self.assertEqual(s, 200)
        key_id = self.doomed_key[4:16]
        self.inst.admin("revoke", key_id)
        s, d, _ = self.call("GET", "/v1/users/bob/conversations", "/v1/users/{user}/conversations", key=self.doomed_key)
        self.assertEqual((s, d["code"]), (401, "UNAUTHENTICATED"))
        self.assertIn("revoked", d["detail"])
        listed = self.inst.admin("list")
        self.assertRegex(listed, key_id + r".*revoked")
        self.assertNotIn(self.doomed_key[17:], listed)

    def test_refusals_scope(self):
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "a", "to": "b", "body": "x"}, key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.call("POST", "/v1/tokens", "/v1/tokens", {"user": "a"}, key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))

    def test_refusals_body_and_route(self):
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", raw="{not json")
        self.assertEqual((s, d["code"]), (400, "BAD_FRAME"))
        big = self.inst.connection()
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", raw=json.dumps({"to": "b", "body": "x" * 300000}),
                            conn=big)
        self.assertEqual((s, d["code"]), (413, "TOO_LARGE"))
        big.close()
        s, d, _ = self.call("GET", "/v1/nothing/here", None)
        self.assertEqual((s, d["code"]), (404, "NOT_FOUND"))
        s, d, r = self.call("GET", "/v1/messages", None)
        self.assertEqual((s, d["code"], r.getheader("Allow")), (405, "NOT_FOUND", "POST"))

class ApiRate(Calls, unittest.TestCase):
    """The token bucket per key, on an instance of its own with a small one (QIM_API_RATE=1, QIM_API_BURST=5)."""

    def test_refusals_rate(self):
        inst = Instance(extra_env={"QIM_API_RATE": "1", "QIM_API_BURST": "5"})
        try:
            self.key = inst.admin("create", "--scopes", "read")
            other = inst.admin("create", "--scopes", "read")
            inst.start()
            c = inst.connection()
            codes = []
            # 5 at once, then 1 a second: 20 requests meet the limit unless they took over 15 s.
            for _ in range(20):
                s, d, r = self.call("GET", "/v1/users/bob/conversations", "/v1/users/{user}/conversations", conn=c)
                codes.append(s)
                if s == 429:
                    self.assertEqual(d["code"], "RATE_LIMITED")
                    self.assertEqual(r.getheader("Retry-After"), "1")
                    break
            self.assertIn(429, codes)
            # The other key has a bucket of its own.
            s, _, _ = self.call("GET", "/v1/users/bob/conversations", "/v1/users/{user}/conversations", key=other,
                                conn=c)
            self.assertEqual(s, 200)
            c.close()
        finally:
            inst.stop()


class ApiTls(unittest.TestCase):
    """The API serves HTTPS with the client port's certificate (here the development pair of --dev-tls)."""

    def test_https(self):
        inst = Instance(flags=["--dev-tls"])
        try:
            key = inst.admin("create", "--scopes", "tokens")
            inst.start()
            self.assertEqual(inst.scheme, "https")
            ctx = ssl.create_default_context(cafile=os.path.join(inst.dir, "tls", "dev-cert.pem"))
            ctx.check_hostname = False
            c = inst.connection(ctx)
            c.request("POST", "/v1/tokens", body=json.dumps({"user": "alice"}),
                      headers={"Authorization": "Bearer " + key})
            r = c.getresponse()
            doc = json.loads(r.read())
            self.assertEqual(r.status, 201)
            check_against(response_schema("/v1/tokens", "POST", 201, r.getheader("Content-Type")), doc)
            c.close()
        finally:
            inst.stop()


class ApiDistributed(Calls, unittest.TestCase):
    """Both gateways of the distributed deployment serve the API with one key file and one idempotency table."""

    def test_two_gateways(self):
        dep = Distributed()
        try:
            self.key = dep.admin("create", "--scopes", "all")
            dep.start()
            self.assertEqual(len(dep.ports), 2)
            gw1 = http.client.HTTPConnection("127.0.0.1", dep.ports[0], timeout=BOUND_S)
            gw2 = http.client.HTTPConnection("127.0.0.1", dep.ports[1], timeout=BOUND_S)
            body = {"from": "alice", "to": "bob", "body": "through gateway 1"}
            s1, d1, _ = self.call("POST", "/v1/messages", "/v1/messages", body, headers={"Idempotency-Key": "k-1"},
                                  conn=gw1)
            self.assertEqual(s1, 201)
            # The retry through the other gateway is the same message (the routing Redis's table).
            s2, d2, _ = self.call("POST", "/v1/messages", "/v1/messages", body, headers={"Idempotency-Key": "k-1"},
                                  conn=gw2)
            self.assertEqual((s2, d2["duplicate"], d2["message_id"]), (200, True, d1["message_id"]))
            s, d, _ = self.call("POST", "/v1/groups", "/v1/groups", {"actor": "alice", "name": "dist", "members": ["bob"]},
                                conn=gw2)
            self.assertEqual(s, 201)
            g = d["group"]
            s, d, _ = self.call("POST", f"/v1/groups/{g}/members", "/v1/groups/{group}/members",
                                {"actor": "alice", "members": ["carol"]}, conn=gw1)
            self.assertEqual(s, 200)
            s, d, _ = self.call("GET", f"/v1/groups/{g}/members?actor=bob", "/v1/groups/{group}/members", conn=gw2)
            self.assertEqual(sorted(m["user"] for m in d["members"]), ["alice", "bob", "carol"])
            s, d, _ = self.call("POST", "/v1/messages", "/v1/messages",
                                {"from": "carol", "conversation": g, "body": "hi all"}, headers={"Idempotency-Key": "k-2"},
                                conn=gw1)
            self.assertEqual(s, 201)

            def history():
                s, d, _ = self.call("GET", f"/v1/conversations/{g}/history", "/v1/conversations/{conversation}/history",
                                    conn=gw2)
                return [m for m in d["messages"] if m.get("client_msg_id") == "k-2"]
            self.assertEqual(self.wait_for("the group message in the history", history)[0]["sender"], "carol")
            # An edit through one gateway repeated through the other is the same event (the shared table); a
            # recall through the other; the history of either shows the tombstone (decision 167).
            carol_msg = history()[0]["message_id"]
            edit_t = "/v1/conversations/{conversation}/messages/{message_id}/edit"
            recall_t = "/v1/conversations/{conversation}/messages/{message_id}/recall"
            s1, e1, _ = self.call("POST", f"/v1/conversations/{g}/messages/{carol_msg}/edit", edit_t,
                                  {"from": "carol", "body": "hi all!"}, headers={"Idempotency-Key": "k-3"}, conn=gw1)
            self.assertEqual((s1, e1["type"]), (201, "EDIT_ACK"), e1)
            s2, e2, _ = self.call("POST", f"/v1/conversations/{g}/messages/{carol_msg}/edit", edit_t,
                                  {"from": "carol", "body": "hi all!"}, headers={"Idempotency-Key": "k-3"}, conn=gw2)
            self.assertEqual((s2, e2["message_id"]), (200, e1["message_id"]))
            s, d, _ = self.call("POST", f"/v1/conversations/{g}/messages/{carol_msg}/recall", recall_t,
                                {"from": "bob"}, conn=gw2)
            self.assertEqual((s, d["code"]), (403, "NOT_ALLOWED"))
            s, d, _ = self.call("POST", f"/v1/conversations/{g}/messages/{carol_msg}/recall", recall_t,
                                {"from": "alice"}, conn=gw2)  # the owner
            self.assertEqual((s, d["type"]), (201, "RECALL_ACK"), d)

            def tombstone():
                s, d, _ = self.call("GET", f"/v1/conversations/{g}/history", "/v1/conversations/{conversation}/history",
                                    conn=gw1)
                return [m for m in d["messages"] if m["message_id"] == carol_msg and m.get("recalled")]
            self.assertEqual(self.wait_for("the tombstone in the history", tombstone)[0]["body"], "")

            def listed():
                s, d, _ = self.call("GET", "/v1/users/bob/conversations", "/v1/users/{user}/conversations", conn=gw1)
                return [c for c in d["conversations"] if c["conversation"] in ("d:alice:bob", g)]
            self.wait_for("bob's conversation list", lambda: len(listed()) == 2)
            s, d, _ = self.call("POST", "/v1/tokens", "/v1/tokens", {"user": "bob"}, conn=gw2)
            self.assertEqual(s, 201)
            # A revocation in the shared key file reaches both gateways.
            dep.admin("revoke", self.key[4:16])
            for c in (gw1, gw2):
                s, d, _ = self.call("GET", "/v1/users/bob/groups", "/v1/users/{user}/groups", conn=c)
                self.assertEqual((s, d["code"]), (401, "UNAUTHENTICATED"))
            gw1.close()
            gw2.close()
        finally:
            dep.stop()


if __name__ == "__main__":
    # The distributed e2e phases (QIM_E2E_DEPLOYMENT=distributed) run the two-gateway test; every other run
    # the endpoints and refusals on `qim up` (on the phase's store, QIM_E2E_BACKEND).
    distributed = os.environ.get("QIM_E2E_DEPLOYMENT") == "distributed"
    names = ["ApiDistributed"] if distributed else ["Api", "ApiRate", "ApiTls"]
    result = unittest.main(argv=[sys.argv[0], "-v", *names], exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"api: {result.testsRun - failed - len(result.skipped)} passed, {failed} failed")
    sys.exit(1 if failed or result.testsRun == 0 else 0)
