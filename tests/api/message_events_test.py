"""A message's life after SEND through the server API (docs/api.md "Editing, recalling and reacting",
docs/adr/0167), and replies (docs/protocol.md "Replies"): the EDIT, RECALL, REACT frames' second door, on
`qim up`, every answer checked against docs/api/openapi.yaml. Run by ctest qim_server_api_events:

    python3 tests/api/message_events_test.py QIM_BINARY OPENAPI_YAML
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_test import Calls  # noqa: E402  (reads the same argv)
from before_send_test import start_class_instance, stop_class_instance  # noqa: E402


class MessageEvents(Calls, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_class_instance(cls, {}, keys=(("key", "all"), ("read_key", "read")))

    @classmethod
    def tearDownClass(cls):
        stop_class_instance(cls)

    def test_send_reply(self):
        # reply_to as on the SEND frame (docs/protocol.md "Replies"): a message of the same conversation; the
        # history carries it with the quote; another conversation's message is UNKNOWN_MESSAGE, nothing sent.
        s, first, _ = self.call("POST", "/v1/messages", "/v1/messages",
                                {"from": "dora", "to": "emil", "body": "lunch at noon?"},
                                headers={"Idempotency-Key": "reply-q"})
        self.assertEqual(s, 201)
        s, other, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "dora", "to": "fay", "body": "x"})
        self.assertEqual(s, 201)
        s, reply, _ = self.call("POST", "/v1/messages", "/v1/messages",
                                {"from": "emil", "to": "dora", "body": "yes", "reply_to": first["message_id"]},
                                headers={"Idempotency-Key": "reply-a"})
        self.assertEqual(s, 201, reply)
        s, d, _ = self.call("POST", "/v1/messages", "/v1/messages",
                            {"from": "emil", "to": "dora", "body": "no", "reply_to": other["message_id"]},
                            headers={"Idempotency-Key": "reply-b"})
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_MESSAGE"))

        def history():
            s, d, _ = self.call("GET", "/v1/conversations/d:dora:emil/history?limit=50",
                                "/v1/conversations/{conversation}/history")
            self.assertEqual(s, 200)
            return [m for m in d["messages"] if m.get("client_msg_id") in ("reply-a", "reply-b")]
        got = self.wait_for("the reply in the history", history)
        self.assertEqual([m["client_msg_id"] for m in got], ["reply-a"], "the refused reply was stored")
        self.assertEqual(got[0]["reply_to"], first["message_id"])
        self.assertEqual((got[0]["quote"]["sender"], got[0]["quote"]["body"]), ("dora", "lunch at noon?"))


    # --- editing and recalling (the EDIT and RECALL frames' door; docs/adr/0167)

    def event_path(self, conversation, message_id, verb):
        return f"/v1/conversations/{conversation}/messages/{message_id}/{verb}"

    def history_of(self, conversation, message_id):
        s, d, _ = self.call("GET", f"/v1/conversations/{conversation}/history?limit=50",
                            "/v1/conversations/{conversation}/history")
        self.assertEqual(s, 200)
        return next((m for m in d["messages"] if m["message_id"] == message_id), None)

    def test_edit_and_recall(self):
        from before_send_test import WsClient, running_port  # noqa: E402 (it imports this module)
        edit_t = "/v1/conversations/{conversation}/messages/{message_id}/edit"
        recall_t = "/v1/conversations/{conversation}/messages/{message_id}/recall"
        s, tok, _ = self.call("POST", "/v1/tokens", "/v1/tokens", {"user": "ezra", "device": "phone"})
        self.assertEqual(s, 201)
        ezra = WsClient(running_port(self.inst), tok["token"])
        self.addCleanup(ezra.close)
        s, sent, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "ines", "to": "ezra", "body": "helo"},
                               headers={"Idempotency-Key": "ev-send"})
        self.assertEqual(s, 201)
        m, conv = sent["message_id"], "d:ezra:ines"
        # The edit: its ACK once fanout decided it, the ~edit entry live on a member's socket, the history's
        # body and marks; the same Idempotency-Key again is the same event.
        s, ack, _ = self.call("POST", self.event_path(conv, m, "edit"), edit_t, {"from": "ines", "body": "hello"},
                              headers={"Idempotency-Key": "ev-edit"})
        self.assertEqual((s, ack["type"], ack["target"], ack["client_msg_id"]), (201, "EDIT_ACK", m, "ev-edit"), ack)

        def event_entry(kind):
            def has(f):
                return f.get("type") == "DELIVER" and any(
                    e.get("client_msg_id") == kind and json.loads(e["body"]).get("message_id") == m
                    for e in f.get("entries", []))
            f = ezra.wait(has)
            return next(json.loads(e["body"]) for e in f["entries"] if e.get("client_msg_id") == kind)
        self.assertEqual(event_entry("~edit")["body"], "hello")
        s, again, _ = self.call("POST", self.event_path(conv, m, "edit"), edit_t, {"from": "ines", "body": "hello"},
                                headers={"Idempotency-Key": "ev-edit"})
        self.assertEqual((s, again["message_id"]), (200, ack["message_id"]))
        s, d, _ = self.call("POST", self.event_path(conv, m, "edit"), edit_t, {"from": "ines", "body": "other"},
                            headers={"Idempotency-Key": "ev-edit"})
        self.assertEqual((s, d["code"]), (409, "INVALID_ARGUMENT"))
        got = self.wait_for("the edit in the history",
                            lambda: (lambda h: h if h and h["body"] == "hello" else None)(self.history_of(conv, m)))
        self.assertEqual(got["edit_count"], 1)
        self.assertGreater(got["edited_at"], 0)
        # The frames' refusals: not the sender, an unknown id, a non-member, a read-only key; nothing appended.
        s, d, _ = self.call("POST", self.event_path(conv, m, "edit"), edit_t, {"from": "ezra", "body": "mine"})
        self.assertEqual((s, d["code"]), (403, "NOT_ALLOWED"))
        s, d, _ = self.call("POST", self.event_path(conv, m, "recall"), recall_t, {"from": "ezra"})
        self.assertEqual((s, d["code"]), (403, "NOT_ALLOWED"))
        s, d, _ = self.call("POST", self.event_path(conv, "1234567", "recall"), recall_t, {"from": "ines"})
        self.assertEqual((s, d["code"]), (404, "UNKNOWN_MESSAGE"))
        s, d, _ = self.call("POST", self.event_path(conv, m, "recall"), recall_t, {"from": "zed"})
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.call("POST", self.event_path(conv, m, "recall"), recall_t, {"from": "ines"}, key=self.read_key)
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, d, _ = self.call("POST", self.event_path(conv, m, "edit"), edit_t, {"from": "ines"})
        self.assertEqual((s, d["code"]), (400, "INVALID_ARGUMENT"))
        # The recall: the ~recall entry live, then the tombstone in the history (no body, no marks of the edit).
        s, ack, _ = self.call("POST", self.event_path(conv, m, "recall"), recall_t, {"from": "ines"})
        self.assertEqual((s, ack["type"], ack["target"]), (201, "RECALL_ACK", m), ack)
        self.assertEqual(event_entry("~recall")["by"], "ines")
        got = self.wait_for("the tombstone in the history",
                            lambda: (lambda h: h if h and h.get("recalled") else None)(self.history_of(conv, m)))
        self.assertEqual(got["body"], "")
        s, d, _ = self.call("POST", self.event_path(conv, m, "recall"), recall_t, {"from": "ines"})
        self.assertEqual((s, d["code"]), (409, "MESSAGE_RECALLED"))
        s, d, _ = self.call("POST", self.event_path(conv, m, "edit"), edit_t, {"from": "ines", "body": "back"})
        self.assertEqual((s, d["code"]), (409, "MESSAGE_RECALLED"))

    def test_edit_and_recall_as_the_system_and_a_group_admin(self):
        edit_t = "/v1/conversations/{conversation}/messages/{message_id}/edit"
        recall_t = "/v1/conversations/{conversation}/messages/{message_id}/recall"
        # No `from`: the system user, who edits its own notice and is no moderator of another's message.
        s, notice, _ = self.call("POST", "/v1/messages", "/v1/messages", {"to": "jo", "body": "maintenance at 9"})
        self.assertEqual(s, 201)
        s, ack, _ = self.call("POST", self.event_path("d:jo:system", notice["message_id"], "edit"), edit_t,
                              {"body": "maintenance at 10"})
        self.assertEqual((s, ack["type"]), (201, "EDIT_ACK"), ack)
        s, mine, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "jo", "to": "system", "body": "ok"})
        self.assertEqual(s, 201)
        s, d, _ = self.call("POST", self.event_path("d:jo:system", mine["message_id"], "recall"), recall_t, {})
        self.assertEqual((s, d["code"]), (403, "NOT_ALLOWED"))
        s, ack, _ = self.call("POST", self.event_path("d:jo:system", notice["message_id"], "recall"), recall_t, {})
        self.assertEqual((s, ack["type"]), (201, "RECALL_ACK"), ack)
        # A group's owner recalls a member's message (the frame's rule); the member may not recall the owner's.
        s, d, _ = self.call("POST", "/v1/groups", "/v1/groups", {"actor": "kim", "name": "mods", "members": ["lou"]})
        self.assertEqual(s, 201)
        g = d["group"]
        s, lou, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "lou", "conversation": g, "body": "spam"})
        self.assertEqual(s, 201)
        s, kim, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "kim", "conversation": g, "body": "rules"})
        self.assertEqual(s, 201)
        s, d, _ = self.call("POST", self.event_path(g, kim["message_id"], "recall"), recall_t, {"from": "lou"})
        self.assertEqual((s, d["code"]), (403, "NOT_ALLOWED"))
        s, d, _ = self.call("POST", self.event_path(g, lou["message_id"], "edit"), edit_t, {"from": "kim", "body": "x"})
        self.assertEqual((s, d["code"]), (403, "NOT_ALLOWED"))
        s, d, _ = self.call("POST", self.event_path(g, lou["message_id"], "recall"), recall_t, {"from": "mo"})
        self.assertEqual((s, d["code"]), (403, "NOT_A_MEMBER"))
        s, ack, _ = self.call("POST", self.event_path(g, lou["message_id"], "recall"), recall_t, {"from": "kim"})
        self.assertEqual((s, ack["type"]), (201, "RECALL_ACK"), ack)
        got = self.wait_for("the moderated tombstone", lambda: (lambda h: h if h and h.get("recalled") else None)(
            self.history_of(g, lou["message_id"])))
        self.assertEqual(got["body"], "")

    def test_reactions(self):
        from before_send_test import WsClient, running_port  # noqa: E402 (it imports this module)
        t = "/v1/conversations/{conversation}/messages/{message_id}/reactions"
        s, tok, _ = self.call("POST", "/v1/tokens", "/v1/tokens", {"user": "nia", "device": "phone"})
        nia = WsClient(running_port(self.inst), tok["token"])
        self.addCleanup(nia.close)
        s, sent, _ = self.call("POST", "/v1/messages", "/v1/messages", {"from": "nia", "to": "oto", "body": "done"})
        self.assertEqual(s, 201)
        m, conv = sent["message_id"], "d:nia:oto"
        path = self.event_path(conv, m, "reactions")
        s, ack, _ = self.call("POST", path, t, {"from": "oto", "reaction": "👍"}, headers={"Idempotency-Key": "re-1"})
        self.assertEqual((s, ack["type"], ack["target"]), (201, "REACT_ACK", m), ack)
        f = nia.wait(lambda f: f.get("type") == "DELIVER" and any(e.get("client_msg_id") == "~react"
                                                                  for e in f.get("entries", [])))
        entry = next(json.loads(e["body"]) for e in f["entries"] if e.get("client_msg_id") == "~react")
        self.assertEqual((entry["message_id"], entry["by"], entry["emoji"], entry["count"]), (m, "oto", "👍", 1))
        got = self.wait_for("the reaction in the history",
                            lambda: (lambda h: h if h and h.get("reactions") else None)(self.history_of(conv, m)))
        self.assertEqual(got["reactions"], [{"emoji": "👍", "count": 1, "mine": False}])
        s, d, _ = self.call("POST", path, t, {"from": "oto", "reaction": "👍"})
        self.assertEqual((s, d["code"]), (409, "REACTION_UNCHANGED"))
        s, d, _ = self.call("POST", path, t, {"from": "oto", "reaction": "hello"})
        self.assertEqual((s, d["code"]), (400, "BAD_REACTION"))
        s, d, _ = self.call("POST", path, t, {"from": "pia", "reaction": "👍"})
        self.assertEqual((s, d["code"]), (403, "FORBIDDEN"))
        s, ack, _ = self.call("DELETE", path, t, {"from": "oto", "reaction": "👍"})
        self.assertEqual((s, ack["type"]), (201, "UNREACT_ACK"), ack)
        self.wait_for("the reaction gone from the history",
                      lambda: (lambda h: h is not None and not h.get("reactions"))(self.history_of(conv, m)))
        s, d, _ = self.call("DELETE", path, t, {"from": "oto", "reaction": "👍"})
        self.assertEqual((s, d["code"]), (409, "REACTION_UNCHANGED"))


if __name__ == "__main__":
    if os.environ.get("QIM_E2E_DEPLOYMENT") == "distributed":
        # There api_test.py's ApiDistributed sends an edit through one gateway and its repeat through the other.
        print("message events: skipped on the distributed deployment (api_test.py ApiDistributed covers it)")
        sys.exit(0)
    result = unittest.main(argv=[sys.argv[0], "-v", "MessageEvents"], exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"message events: {result.testsRun - failed - len(result.skipped)} passed, {failed} failed")
    sys.exit(1 if failed or result.testsRun == 0 else 0)
