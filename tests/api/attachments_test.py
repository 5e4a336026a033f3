#!/usr/bin/env python3
"""Attachments through the server API (docs/api.md "Attachments", docs/adr/0165) against a real `qim up` with
the object store (SeaweedFS through its S3 API; QIM_TEST_S3_*, which scripts/test.sh's objstore phase group
exports): an upload granted through POST /v1/attachments and PUT to its presigned URL, a message referencing
it sent through POST /v1/messages, its download URL asked through the API for the other member and the same
bytes fetched (hash compared); the frames' refusals (a non-member, a wrong scope) as problems; the same
grant and URL through the WebSocket door; and, on a `qim up` without an object store, ATTACHMENTS_DISABLED.
Every answer is checked against docs/api/openapi.yaml (api_test.Calls).

usage: attachments_test.py QIM_BINARY OPENAPI_YAML   (prints "attachments: N passed, M failed")
"""
import hashlib
import http.client
import os
import struct
import sys
import unittest
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_test import BOUND_S, Calls, Distributed, Instance  # noqa: E402  (reads the same argv)
from before_send_test import WsClient, running_port, start_class_instance, stop_class_instance, token  # noqa: E402

AUTH_SECRET = "attachments-test-secret-0123456789abcdef"
S3 = {k: os.environ.get("QIM_TEST_S3_" + k) for k in ("ENDPOINT", "BUCKET", "ACCESS_KEY", "SECRET_KEY")}
NO_STORE = None if S3["ENDPOINT"] else (
    "no object store: QIM_TEST_S3_ENDPOINT is unset (scripts/test.sh sets it in its objstore phase group; or run "
    "scripts/engines/objstore.sh start && wait and export QIM_TEST_S3_* from its `env`)")
DAILY_BYTES = 1_000_000  # QIM_ATTACH_DAILY_BYTES of the instance (test_group_block_and_budget_as_the_frames)
URL_ROUTE = "/v1/conversations/{conversation}/messages/{message_id}/attachments/{attachment}"


def png(width, height):
    """A valid RGB PNG (the server decodes a declared image and makes its thumbnail)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"".join(bytes((x * 7 % 256, y * 5 % 256, 90)) for x in range(width))
                    for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def http_bytes(method, url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(req, timeout=BOUND_S) as r:
        return r.status, r.read()


@unittest.skipIf(NO_STORE, NO_STORE)
class ApiAttachments(Calls, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        env = {"QIM_AUTH_SECRET": AUTH_SECRET, "QIM_S3_ENDPOINT": S3["ENDPOINT"], "QIM_S3_BUCKET": S3["BUCKET"],
               "QIM_S3_ACCESS_KEY": S3["ACCESS_KEY"], "QIM_S3_SECRET_KEY": S3["SECRET_KEY"],
               "QIM_ATTACH_DAILY_BYTES": str(DAILY_BYTES)}
        start_class_instance(cls, env, keys=(("key", "all"), ("read_key", "read"), ("send_key", "send")))

    @classmethod
    def tearDownClass(cls):
        stop_class_instance(cls)

    def grant(self, sender, conversation, data, name="receipt.png", client_upload_id=None, key=None):
        body = {"from": sender, "conversation": conversation, "name": name, "content_type": "image/png",
                "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        if client_upload_id:
            body["client_upload_id"] = client_upload_id
        return self.call("POST", "/v1/attachments", "/v1/attachments", body, key=key)

    def upload(self, sender, conversation, data, **kw):
        """The grant, then the PUT of `data` to its URL with exactly its headers: the attachment id."""
        s, d, _ = self.grant(sender, conversation, data, **kw)
        self.assertEqual(s, 201, d)
        self.assertEqual((d["type"], d["method"]), ("ATTACH_OK", "PUT"))
        status, _ = http_bytes("PUT", d["upload_url"], data, d["headers"])
        self.assertEqual(status, 200)
        return d

    def send(self, sender, conversation, text, data, attachment, key=None, headers=None):
        entry = {"attachment": attachment, "name": "receipt.png", "content_type": "image/png", "size": len(data),
                 "sha256": hashlib.sha256(data).hexdigest()}
        return self.call("POST", "/v1/messages", "/v1/messages",
                         {"from": sender, "conversation": conversation, "body": text, "attachments": [entry]},
                         key=key, headers=headers)

    def url_of(self, conversation, message_id, attachment, user, thumbnail=None, key=None):
        path = f"/v1/conversations/{conversation}/messages/{message_id}/attachments/{attachment}?user={user}"
        if thumbnail is not None:
            path += "&thumbnail=" + ("true" if thumbnail else "false")
        return self.call("GET", path, URL_ROUTE, key=self.read_key if key is None else key)

    def archived(self, conversation, message_id):
        """Waits (bounded) until the archiver has the message: the download route reads the history."""
        def found():
            s, d, _ = self.call("GET", f"/v1/conversations/{conversation}/history?limit=50",
                                "/v1/conversations/{conversation}/history", key=self.read_key)
            self.assertEqual(s, 200)
            return [m for m in d["messages"] if m["message_id"] == message_id]
        return self.wait_for("the message in the history", found)[0]

    def test_upload_send_download_same_bytes(self):
        data = png(64, 48)
        conv = "d:alice:bob"
        grant = self.upload("alice", conv, data, client_upload_id="order-42-receipt", key=self.send_key)
        att = grant["attachment"]
        self.assertEqual(grant["conversation"], conv)
        self.assertEqual(grant["headers"]["Content-Type"], "image/png")
        # A repeat with the same client_upload_id and declaration: the same upload (decision 161).
        s, again, _ = self.grant("alice", conv, data, client_upload_id="order-42-receipt", key=self.send_key)
        self.assertEqual((s, again["attachment"], again["expires_at"]), (201, att, grant["expires_at"]))
        once = {"Idempotency-Key": "order-42-receipt-msg"}
        s, ack, _ = self.send("alice", conv, "your receipt", data, att, key=self.send_key, headers=once)
        self.assertEqual((s, ack["type"]), (201, "SEND_ACK"), ack)
        # Its retry (the checked body is the same) is the same message.
        s, dup, _ = self.send("alice", conv, "your receipt", data, att, key=self.send_key, headers=once)
        self.assertEqual((s, dup["duplicate"], dup["message_id"]), (200, True, ack["message_id"]), dup)
        msg = self.archived(conv, ack["message_id"])
        self.assertTrue(msg["body"].startswith('{"qim":"attachments"'), msg["body"])
        self.assertIn(att, msg["body"])
        # bob, the other member, gets a URL through the API and fetches the very bytes alice uploaded.
        s, d, _ = self.url_of(conv, ack["message_id"], att, "bob")
        self.assertEqual((s, d["type"], d["attachment"], d["thumbnail"]), (200, "ATTACHMENT_URL_OK", att, False), d)
        status, got = http_bytes("GET", d["url"])
        self.assertEqual(status, 200)
        self.assertEqual(hashlib.sha256(got).hexdigest(), hashlib.sha256(data).hexdigest())
        # The thumbnail the SEND's check made (a decodable image): a smaller image.
        s, d, _ = self.url_of(conv, ack["message_id"], att, "bob", thumbnail=True)
        self.assertEqual((s, d["thumbnail"]), (200, True), d)
        status, thumb = http_bytes("GET", d["url"])
        self.assertEqual(status, 200)
        self.assertGreater(len(thumb), 0)
        self.assertNotEqual(thumb, data)
        # The same message through the WebSocket door: bob's ATTACHMENT_URL frame is answered alike.
        ws = WsClient(self.ws_port, token(self.inst, "bob"))
        self.addCleanup(ws.close)
        ws.send({"type": "ATTACHMENT_URL", "ref": "u1", "conversation": conv, "message_id": ack["message_id"],
                 "attachment": att})
        f = ws.wait(lambda f: f.get("ref") == "u1")
        self.assertEqual((f["type"], f["attachment"]), ("ATTACHMENT_URL_OK", att), f)
        self.assertEqual(hashlib.sha256(http_bytes("GET", f["url"])[1]).hexdigest(), hashlib.sha256(data).hexdigest())

    def test_refusals_as_the_frames(self):
        data = png(8, 8)
        conv = "d:alice:bob"
        att = self.upload("alice", conv, data)["attachment"]
        s, ack, _ = self.send("alice", conv, "", data, att)
        self.assertEqual(s, 201, ack)
        self.archived(conv, ack["message_id"])
        # carol is no member: no upload into it (SEND's rule), no URL of its message (one code for unknown
        # and forbidden, so nothing is revealed).
        s, d, _ = self.grant("carol", conv, data)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.url_of(conv, ack["message_id"], att, "carol")
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_ATTACHMENT"))
        s, d, _ = self.url_of(conv, ack["message_id"], "a1.nope.nope", "bob")
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_ATTACHMENT"))
        # bob may not send alice's upload as his (ids are bound to their uploader).
        s, d, _ = self.send("bob", conv, "mine?", data, att)
        self.assertEqual((s, d["code"]), (422, "ATTACHMENT_MISSING"))
        # An upload declared with another hash than the bytes put: refused at the SEND.
        other = png(9, 9)
        grant = self.upload("alice", conv, other)
        s, d, _ = self.send("alice", conv, "wrong", data, grant["attachment"])
        self.assertEqual((s, d["code"]), (422, "ATTACHMENT_MISMATCH"))
        # Scopes: an upload is a send (scope send), a download URL a read (scope read).
        s, d, _ = self.grant("alice", conv, data, key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        self.assertIn("'send'", d["detail"])
        s, d, _ = self.url_of(conv, ack["message_id"], att, "bob", key=self.send_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        self.assertIn("'read'", d["detail"])
        # The frames' field rules: too large, a type not allowed, a missing field.
        s, d, _ = self.call("POST", "/v1/attachments", "/v1/attachments",
                            {"from": "alice", "conversation": conv, "name": "big.png", "content_type": "image/png",
                             "size": 200 << 20})
        self.assertEqual((s, d["code"]), (413, "TOO_LARGE"))
        s, d, _ = self.call("POST", "/v1/attachments", "/v1/attachments",
                            {"from": "alice", "conversation": conv, "name": "x.exe",
                             "content_type": "application/x-msdownload", "size": 10})
        self.assertEqual((s, d["code"]), (415, "UNSUPPORTED_TYPE"))
        s, d, _ = self.call("POST", "/v1/attachments", "/v1/attachments", {"from": "alice", "conversation": conv})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))


    def ws(self, user):
        c = WsClient(self.ws_port, token(self.inst, user))
        self.addCleanup(c.close)
        return c

    def test_group_block_and_budget_as_the_frames(self):
        data = png(16, 16)
        # A group (GROUP_CREATE through the API): a member uploads and sends, another member gets the URL; a
        # user outside may do neither.
        s, d, _ = self.call("POST", "/v1/groups", "/v1/groups", {"actor": "gina", "name": "support", "members": ["hank"]})
        self.assertEqual(s, 201, d)
        g = d["group"]
        att = self.upload("hank", g, data)["attachment"]
        s, ack, _ = self.send("hank", g, "screenshot", data, att)
        self.assertEqual(s, 201, ack)
        self.archived(g, ack["message_id"])
        s, d, _ = self.url_of(g, ack["message_id"], att, "gina")
        self.assertEqual(s, 200, d)
        self.assertEqual(http_bytes("GET", d["url"])[1], data)
        s, d, _ = self.grant("ivan", g, data)
        self.assertEqual((s, d["code"]), (403, "NOT_A_MEMBER"))
        s, d, _ = self.url_of(g, ack["message_id"], att, "ivan")
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_ATTACHMENT"))
        # The block rule (SEND's): jude blocks kate through the socket; kate's upload into their conversation
        # through the API is refused as her ATTACH frame is.
        jude, kate = self.ws("jude"), self.ws("kate")
        jude.send({"type": "BLOCK", "ref": "b1", "user": "kate"})
        self.assertEqual(jude.wait(lambda f: f.get("ref") == "b1")["type"], "BLOCK_OK")
        s, d, _ = self.grant("kate", "d:jude:kate", data)
        self.assertEqual((s, d["code"]), (403, "BLOCKED"))
        kate.send({"type": "ATTACH", "ref": "a1", "conversation": "d:jude:kate", "name": "a.png",
                   "content_type": "image/png", "size": len(data)})
        f = kate.wait(lambda f: f.get("ref") == "a1")
        self.assertEqual((f["type"], f["code"], f["message"]), ("ERROR", "BLOCKED", d["detail"]))
        # One daily budget per user behind both doors (QIM_ATTACH_DAILY_BYTES here): most of it granted to
        # leo's ATTACH frame, the rest is too little for his API request.
        leo = self.ws("leo")
        big = DAILY_BYTES * 6 // 10
        leo.send({"type": "ATTACH", "ref": "a2", "conversation": "d:leo:mia", "name": "scan.pdf",
                  "content_type": "application/pdf", "size": big})
        self.assertEqual(leo.wait(lambda f: f.get("ref") == "a2")["type"], "ATTACH_OK")
        s, d, _ = self.call("POST", "/v1/attachments", "/v1/attachments",
                            {"from": "leo", "conversation": "d:leo:mia", "name": "scan2.pdf",
                             "content_type": "application/pdf", "size": big})
        self.assertEqual((s, d["code"]), (429, "QUOTA_EXCEEDED"))
        s, d, _ = self.call("POST", "/v1/attachments", "/v1/attachments",
                            {"from": "mia", "conversation": "d:leo:mia", "name": "scan2.pdf",
                             "content_type": "application/pdf", "size": big})
        self.assertEqual(s, 201, d)  # mia's budget is her own


class ApiAttachmentsDisabled(Calls, unittest.TestCase):
    """A `qim up` without an object store: every attachment door answers ATTACHMENTS_DISABLED (501), as the
    frames do."""

    def test_disabled(self):
        inst = Instance()
        for k in ("QIM_S3_ENDPOINT", "QIM_S3_BUCKET", "QIM_S3_ACCESS_KEY", "QIM_S3_SECRET_KEY"):
            inst.env.pop(k, None)
        try:
            self.key = inst.admin("create", "--scopes", "all")
            inst.start()
            self.conn = inst.connection()
            s, d, _ = self.call("POST", "/v1/attachments", "/v1/attachments",
                                {"from": "alice", "conversation": "d:alice:bob", "name": "a.png",
                                 "content_type": "image/png", "size": 5})
            self.assertEqual((s, d["code"]), (501, "ATTACHMENTS_DISABLED"))
            s, d, _ = self.call("GET", "/v1/conversations/d:alice:bob/messages/1/attachments/a1.x.y?user=bob",
                                URL_ROUTE)
            self.assertEqual((s, d["code"]), (501, "ATTACHMENTS_DISABLED"))
            s, d, _ = self.call("POST", "/v1/messages", "/v1/messages",
                                {"from": "alice", "to": "bob", "body": "x",
                                 "attachments": [{"attachment": "a1.x.y", "name": "a.png", "content_type": "image/png",
                                                  "size": 5}]})
            self.assertEqual((s, d["code"]), (501, "ATTACHMENTS_DISABLED"))
            self.conn.close()
        finally:
            inst.stop()


@unittest.skipIf(NO_STORE, NO_STORE)
class ApiAttachmentsDistributed(Calls, unittest.TestCase):
    """The distributed deployment (api_test.Distributed: Kafka, the phase's store, two gateways sharing the
    auth secret and the routing Redis): an upload granted through one gateway's API is repeated through the
    other's by its client_upload_id (the claim in the routing Redis), sent through the other, and its URL asked
    through the first gives back the same bytes."""

    def test_two_gateways(self):
        dep = Distributed({"QIM_S3_ENDPOINT": S3["ENDPOINT"], "QIM_S3_BUCKET": S3["BUCKET"],
                           "QIM_S3_ACCESS_KEY": S3["ACCESS_KEY"], "QIM_S3_SECRET_KEY": S3["SECRET_KEY"]})
        try:
            self.key = dep.admin("create", "--scopes", "all")
            dep.start()
            self.assertEqual(len(dep.ports), 2)
            gw1 = http.client.HTTPConnection("127.0.0.1", dep.ports[0], timeout=BOUND_S)
            gw2 = http.client.HTTPConnection("127.0.0.1", dep.ports[1], timeout=BOUND_S)
            self.addCleanup(gw1.close)
            self.addCleanup(gw2.close)
            data = png(32, 24)
            conv = "d:alice:bob"
            ask = {"from": "alice", "conversation": conv, "name": "receipt.png", "content_type": "image/png",
                   "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "client_upload_id": "dist-1"}
            s, g1, _ = self.call("POST", "/v1/attachments", "/v1/attachments", ask, conn=gw1)
            self.assertEqual(s, 201, g1)
            self.assertEqual(http_bytes("PUT", g1["upload_url"], data, g1["headers"])[0], 200)
            s, g2, _ = self.call("POST", "/v1/attachments", "/v1/attachments", ask, conn=gw2)
            self.assertEqual((s, g2["attachment"]), (201, g1["attachment"]), g2)
            entry = {k: ask[k] for k in ("name", "content_type", "size", "sha256")}
            entry["attachment"] = g1["attachment"]
            s, ack, _ = self.call("POST", "/v1/messages", "/v1/messages",
                                  {"from": "alice", "to": "bob", "body": "receipt", "attachments": [entry]}, conn=gw2)
            self.assertEqual(s, 201, ack)
            path = (f"/v1/conversations/{conv}/messages/{ack['message_id']}/attachments/{g1['attachment']}"
                    "?user=bob")

            def url():
                s, d, _ = self.call("GET", path, URL_ROUTE, conn=gw1)
                self.assertIn(s, (200, 404), d)  # 404 until the archiver has the message
                return d if s == 200 else None
            d = self.wait_for("the download URL through the other gateway", url)
            self.assertEqual(hashlib.sha256(http_bytes("GET", d["url"])[1]).hexdigest(), ask["sha256"])
        finally:
            dep.stop()


if __name__ == "__main__":
    # The distributed e2e phases (QIM_E2E_DEPLOYMENT=distributed) run the two-gateway test; every other run
    # the `qim up` ones.
    distributed = os.environ.get("QIM_E2E_DEPLOYMENT") == "distributed"
    names = ["ApiAttachmentsDistributed"] if distributed else ["ApiAttachments", "ApiAttachmentsDisabled"]
    result = unittest.main(argv=[sys.argv[0], "-v", *names], exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"attachments: {result.testsRun - failed - len(result.skipped)} passed, {failed} failed, "
          f"{len(result.skipped)} skipped")
    sys.exit(1 if failed or result.testsRun == 0 else 0)
