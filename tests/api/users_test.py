#!/usr/bin/env python3
"""The user registry (docs/api.md "Users") against a real `qim up` with QIM_USER_REGISTRY=1: the /v1/users
endpoints (answers checked against docs/api/openapi.yaml) and their refusals, UNKNOWN_USER for a direct SEND
and a group add naming an unknown user through both doors (WebSocket and API), and a deleted user's token
refused at AUTH with its live connection closed. In the distributed e2e phases (QIM_E2E_DEPLOYMENT=distributed)
the same on the distributed deployment: users written through one gateway's API are known to the other's
send path (the registry's cells in the routing Redis, docs/adr/0149).

usage: users_test.py QIM_BINARY OPENAPI_YAML   (prints "users: N passed, M failed")
"""
import http.client
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_test import BOUND_S, Calls, Distributed  # noqa: E402  (reads the same argv)
from before_send_test import WsClient, running_port, start_class_instance, stop_class_instance, token  # noqa: E402

AUTH_SECRET = "users-test-secret-0123456789abcdef"


class Users(Calls, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_class_instance(cls, {"QIM_USER_REGISTRY": "1", "QIM_AUTH_SECRET": AUTH_SECRET},
                             keys=(("key", "all"), ("read_key", "read")))

    def setUp(self):
        for u in ("alice", "bob"):
            s, d, _ = self.call("POST", "/v1/users", "/v1/users", {"id": u, "display_name": u.title()})
            self.assertIn(s, (201, 409), d)

    @classmethod
    def tearDownClass(cls):
        stop_class_instance(cls)

    def ws(self, user):
        c = WsClient(self.ws_port, token(self.inst, user))
        self.addCleanup(c.close)
        return c

    def test_crud_and_refusals(self):
        s, d, _ = self.call("POST", "/v1/users", "/v1/users",
                            {"id": "carol", "display_name": "Carol", "avatar_url": "https://example.com/c.png"})
        self.assertEqual((s, d["id"], d["display_name"]), (201, "carol", "Carol"))
        s, d, _ = self.call("GET", "/v1/users/carol", "/v1/users/{user}")
        self.assertEqual((s, d["avatar_url"]), (200, "https://example.com/c.png"))
        s, d, _ = self.call("PATCH", "/v1/users/carol", "/v1/users/{user}", {"display_name": "Carol C."})
        self.assertEqual((s, d["display_name"], d["avatar_url"]), (200, "Carol C.", "https://example.com/c.png"))
        s, d, _ = self.call("POST", "/v1/users", "/v1/users", {"id": "carol"})
        self.assertEqual((s, d["code"]), (409, "USER_EXISTS"))
        s, d, _ = self.call("POST", "/v1/users", "/v1/users", {"id": "Carol"})  # a look-alike
        self.assertEqual((s, d["code"]), (409, "USER_EXISTS"))
        self.assertIn("only in case", d["detail"])
        s, d, _ = self.call("POST", "/v1/users", "/v1/users", {"id": "bad:id"})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        s, d, _ = self.call("POST", "/v1/users", "/v1/users", {"id": "dora", "age": 3})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        s, d, _ = self.call("GET", "/v1/users/nobody", "/v1/users/{user}")
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_USER"))
        s, d, _ = self.call("PATCH", "/v1/users/nobody", "/v1/users/{user}", {"display_name": "x"})
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_USER"))
        s, d, _ = self.call("GET", "/v1/users", "/v1/users", key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        # A page at a time, in id order.
        s, d, _ = self.call("GET", "/v1/users?limit=2", "/v1/users")
        self.assertEqual(s, 200)
        self.assertEqual([u["id"] for u in d["users"]], ["alice", "bob"])
        s, d, _ = self.call("GET", "/v1/users?after=" + d["next"], "/v1/users")
        self.assertIn("carol", [u["id"] for u in d["users"]])

    def test_unknown_users_are_refused_through_both_doors(self):
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "nobody", "body": "hi"})
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_USER"))
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "bob", "body": "hi"})
        self.assertEqual(s, 201, d)
        c = self.ws("alice")
        f = c.send_message("u1", "nobody", "hello?")
        self.assertEqual((f["type"], f["code"]), ("ERROR", "UNKNOWN_USER"), f)
        f = c.send_message("u2", "bob", "hello bob")
        self.assertEqual(f["type"], "SEND_ACK", f)
        # Display names reach the conversation list.
        self.wait_for("bob's row in alice's list", lambda: [
            r for r in self.call("GET", "/v1/users/alice/conversations", "/v1/users/{user}/conversations")[1]
            ["conversations"] if r["conversation"] == "d:alice:bob" and r.get("peer_name") == "Bob"])
        s, d, _ = self.call("POST", "/v1/groups", "/v1/groups", {"actor": "alice", "name": "team", "members": ["bob", "nobody"]})
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_USER"))
        c.send({"type": "GROUP_CREATE", "ref": "g1", "members": ["nobody"], "name": "x"})
        f = c.wait(lambda f: f.get("ref") == "g1")
        self.assertEqual((f["type"], f["code"]), ("ERROR", "UNKNOWN_USER"), f)

    def test_a_deleted_users_tokens_stop_working(self):
        s, d, _ = self.call("POST", "/v1/users", "/v1/users", {"id": "erin"})
        self.assertEqual(s, 201, d)
        erin_token = token(self.inst, "erin")
        live = WsClient(self.ws_port, erin_token)
        self.addCleanup(live.close)
        s, d, _ = self.call("DELETE", "/v1/users/erin", "/v1/users/{user}")
        self.assertEqual((s, d["deleted"]), (200, True))
        self.assertGreater(d["not_before"], 0)
        # The live connection is closed (the sessions revocation's close, 4001), within the socket's bound.
        with self.assertRaises(AssertionError) as closed:
            live.wait(lambda f: False)
        self.assertIn("closed", str(closed.exception))
        with self.assertRaises(AssertionError) as refused:
            WsClient(self.ws_port, erin_token)
        self.assertIn("AUTH refused", str(refused.exception))
        s, d, _ = self.call("GET", "/v1/users/erin", "/v1/users/{user}")
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_USER"))
        c = self.ws("alice")
        f = c.send_message("u3", "erin", "are you there?")
        self.assertEqual((f["type"], f["code"]), ("ERROR", "UNKNOWN_USER"), f)


class Blocking(Calls, unittest.TestCase):
    """The block rule (docs/protocol.md "Blocking") behind both doors: the API's send as the blocked user in
    the direct conversation is refused with the WebSocket SEND's code (one rule: send_request.h)."""

    @classmethod
    def setUpClass(cls):
        start_class_instance(cls, {"QIM_AUTH_SECRET": AUTH_SECRET})

    @classmethod
    def tearDownClass(cls):
        stop_class_instance(cls)

    def test_the_api_send_honours_blocking_as_the_websocket_does(self):
        bob = WsClient(self.ws_port, token(self.inst, "bob"))
        self.addCleanup(bob.close)
        alice = WsClient(self.ws_port, token(self.inst, "alice"))
        self.addCleanup(alice.close)
        bob.send({"type": "BLOCK", "ref": "k1", "user": "alice"})
        f = bob.wait(lambda f: f.get("ref") == "k1")
        self.assertEqual((f["type"], f["blocked"]), ("BLOCK_OK", True), f)
        ws = alice.send_message("b1", "bob", "through the socket")
        self.assertEqual(ws["type"], "ERROR", ws)
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "bob", "body": "via api"})
        self.assertEqual((s, d["code"]), (403, ws["code"]))
        self.assertEqual(d["code"], "BLOCKED")
        self.assertEqual(d["detail"], ws["message"], "one rule, one refusal")
        # Also when the conversation is named rather than the peer; the blocker may still write.
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages",
                            {"from": "alice", "conversation": "d:alice:bob", "body": "via api"})
        self.assertEqual((s, d["code"]), (403, "BLOCKED"))
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "bob", "to": "alice", "body": "hi"})
        self.assertEqual(s, 201, d)
        bob.send({"type": "UNBLOCK", "ref": "k2", "user": "alice"})
        self.assertEqual(bob.wait(lambda f: f.get("ref") == "k2")["blocked"], False)
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "bob", "body": "again"})
        self.assertEqual(s, 201, d)


class UsersDistributed(Calls, unittest.TestCase):
    """QIM_USER_REGISTRY=1 on the distributed deployment (two gateways, Kafka, the routing Redis): what one
    gateway's API writes, the other gateway's doors know within its refresh interval."""

    def test_unknown_users_and_deleted_users_across_gateways(self):
        dep = Distributed({"QIM_USER_REGISTRY": "1", "QIM_USER_REGISTRY_REFRESH_MS": "100"})
        self.addCleanup(dep.stop)
        self.key = dep.admin("create", "--scopes", "all")
        dep.start()  # before the Redis cells, a distributed gateway refused to start with the registry on
        self.assertEqual(len(dep.ports), 2)
        gw1 = http.client.HTTPConnection("127.0.0.1", dep.ports[0], timeout=BOUND_S)
        gw2 = http.client.HTTPConnection("127.0.0.1", dep.ports[1], timeout=BOUND_S)
        self.addCleanup(gw1.close)
        self.addCleanup(gw2.close)
        ws2 = running_port(types.SimpleNamespace(dir=os.path.join(dep.dir, "gateway-2")))

        def mint(user):
            s, d, _ = self.call("POST", "/v1/tokens", "/v1/tokens", {"user": user, "device": "d1"}, conn=gw2)
            self.assertEqual(s, 201, d)
            return d["token"]

        for u in ("alice", "bob", "erin"):
            s, d, _ = self.call("POST", "/v1/users", "/v1/users", {"id": u, "display_name": u.title()}, conn=gw1)
            self.assertEqual(s, 201, d)
        # Written through gateway 1; gateway 2's send path learns of bob by its refresh.
        self.wait_for("bob known to gateway 2", lambda: self.call(
            "POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "bob", "body": "hi"},
            headers={"Idempotency-Key": "hi-bob"}, conn=gw2)[0] == 201)
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "nobody", "body": "hi"},
                            conn=gw2)
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_USER"))
        s, d, _ = self.call("POST", "/v1/groups", "/v1/groups",
                            {"actor": "alice", "name": "team", "members": ["bob", "nobody"]}, conn=gw2)
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_USER"))
        alice = WsClient(ws2, mint("alice"))
        self.addCleanup(alice.close)
        f = alice.send_message("u1", "nobody", "hello?")
        self.assertEqual((f["type"], f["code"]), ("ERROR", "UNKNOWN_USER"), f)
        f = alice.send_message("u2", "bob", "hello bob")
        self.assertEqual(f["type"], "SEND_ACK", f)
        # Display names reach the conversation list served by gateway 2.
        self.wait_for("bob's name in alice's list", lambda: [
            r for r in self.call("GET", "/v1/users/alice/conversations", "/v1/users/{user}/conversations",
                                 conn=gw2)[1]["conversations"]
            if r["conversation"] == "d:alice:bob" and r.get("peer_name") == "Bob"])

        # erin, connected to gateway 2, is deleted through gateway 1.
        erin_token = mint("erin")
        live = WsClient(ws2, erin_token)
        self.addCleanup(live.close)
        s, d, _ = self.call("DELETE", "/v1/users/erin", "/v1/users/{user}", conn=gw1)
        self.assertEqual((s, d["deleted"]), (200, True))
        with self.assertRaises(AssertionError) as closed:
            live.wait(lambda f: False)
        self.assertIn("closed", str(closed.exception))
        with self.assertRaises(AssertionError) as refused:
            WsClient(ws2, erin_token)
        self.assertIn("AUTH refused", str(refused.exception))
        self.wait_for("erin unknown to gateway 2", lambda: self.call(
            "POST", "/v1/messages", "/v1/messages", {"from": "alice", "to": "erin", "body": "there?"},
            conn=gw2)[1].get("code") == "UNKNOWN_USER")


if __name__ == "__main__":
    # The distributed e2e phases run the two-gateway test; every other run the endpoints on `qim up`.
    distributed = os.environ.get("QIM_E2E_DEPLOYMENT") == "distributed"
    names = ["UsersDistributed"] if distributed else ["Users", "Blocking"]
    result = unittest.main(argv=[sys.argv[0], "-v", *names], exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"users: {result.testsRun - failed - len(result.skipped)} passed, {failed} failed")
    sys.exit(1 if failed or result.testsRun == 0 else 0)
