#!/usr/bin/env python3
"""Read receipts as event webhook events (docs/webhooks.md, docs/adr/0147) against a real `qim up`: a local
hook verifies every request with the published `standardwebhooks` library (PyPI, pinned in
tests/api/requirements.txt; not our code). alice sends to bob, bob READs it: the hook gets
`message.created` and then `message.read` naming that message, in Outbox position order; the receipt is
no message (the conversation's history holds the one message).

usage: webhook_receipts_test.py QIM_BINARY OPENAPI_YAML   (prints "webhook receipts: N passed, M failed")
"""
import http.server
import json
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_test import Calls  # noqa: E402  (reads the same argv)
from before_send_test import WsClient, start_class_instance, stop_class_instance, token  # noqa: E402
from standardwebhooks import Webhook  # noqa: E402

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
AUTH_SECRET = "webhook-receipts-test-secret-0123456789"


class EventHook:
    """The event webhook's receiver on 127.0.0.1: verifies each request with `standardwebhooks`, records
    the event and answers 204."""

    def __init__(self):
        self.verifier = Webhook(SECRET)
        self.events = []
        self.bad_signatures = 0
        self.lock = threading.Lock()
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    event = hook.verifier.verify(raw, dict(self.headers.items()))
                    status = 204
                except Exception:  # noqa: BLE001  (any verification failure is a bad request)
                    event, status = None, 400
                with hook.lock:
                    if event is None:
                        hook.bad_signatures += 1
                    else:
                        hook.events.append(event)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def of(self, type_):
        with self.lock:
            return [e for e in self.events if e["type"] == type_]

    def all(self):
        with self.lock:
            return list(self.events)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class WebhookReceipts(Calls, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hook = EventHook()
        start_class_instance(cls, {"QIM_WEBHOOK_URL": f"http://127.0.0.1:{cls.hook.port}/events",
                                   "QIM_WEBHOOK_SECRET": SECRET, "QIM_WEBHOOK_COMMIT_INTERVAL_MS": "0",
                                   "QIM_AUTH_SECRET": AUTH_SECRET},
                             hook=cls.hook)

    @classmethod
    def tearDownClass(cls):
        stop_class_instance(cls, hook=cls.hook)

    def ws(self, user):
        c = WsClient(self.ws_port, token(self.inst, user))
        self.addCleanup(c.close)
        return c

    def test_a_read_is_message_read_after_the_message_it_names(self):
        alice, bob = self.ws("alice"), self.ws("bob")
        ack = alice.send_message("r1", "bob", "read me")
        self.assertEqual(ack["type"], "SEND_ACK", ack)
        message_id = ack["message_id"]
        deliver = bob.wait(lambda f: f.get("type") == "DELIVER" and
                           any(e["message_id"] == message_id for e in f["entries"]))
        seq = next(e["seq"] for e in deliver["entries"] if e["message_id"] == message_id)
        bob.send({"type": "READ", "ref": "read", "conversation": "d:alice:bob", "seq": seq})
        ok = bob.wait(lambda f: f.get("ref") == "read")
        self.assertEqual(ok["type"], "READ_OK", ok)

        self.wait_for("message.read at the hook", lambda: self.hook.of("message.read"))
        reads = self.hook.of("message.read")
        self.assertEqual(len(reads), 1, reads)
        read = reads[0]
        self.assertEqual(read["conversation"], "d:alice:bob")
        self.assertEqual(read["data"], {"reader": "bob", "reader_device": "d1", "read_through": message_id})
        created = [e for e in self.hook.of("message.created") if e["data"]["message_id"] == message_id]
        self.assertEqual(len(created), 1, self.hook.all())
        position = lambda e: (e["position"]["partition"], int(e["position"]["offset"]))  # noqa: E731
        self.assertLess(position(created[0]), position(read), "the receipt came before the message it names")
        order = [e["id"] for e in self.hook.all()]
        self.assertLess(order.index(created[0]["id"]), order.index(read["id"]), "delivered out of Outbox order")
        self.assertEqual(self.hook.bad_signatures, 0)

        # The receipt is no message: once a later message is archived (it comes after the receipt in the
        # Outbox), the history holds the two messages alone; a READ that moves nothing appends nothing.
        bob.send({"type": "READ", "ref": "again", "conversation": "d:alice:bob", "seq": seq})
        self.assertEqual(bob.wait(lambda f: f.get("ref") == "again")["type"], "READ_OK")
        ack2 = alice.send_message("r2", "bob", "after")
        self.assertEqual(ack2["type"], "SEND_ACK", ack2)
        # No mailbox holds the receipt: what bob is delivered before the later message is that message.
        delivered = []
        bob.wait(lambda f: f.get("type") == "DELIVER" and delivered.extend(e["message_id"] for e in f["entries"])
                 is None and ack2["message_id"] in delivered)
        self.assertEqual(set(delivered), {ack2["message_id"]}, "bob was delivered something else")
        self.wait_for("the later message's event", lambda: any(
            e["data"].get("message_id") == ack2["message_id"] for e in self.hook.of("message.created")))
        self.assertEqual(len(self.hook.of("message.read")), 1, self.hook.of("message.read"))
        self.wait_for("the later message in the history", lambda: "after" in self.history_bodies())
        self.assertEqual(sorted(self.history_bodies()), ["after", "read me"])

    def history_bodies(self):
        s, d, _ = self.call("GET", "/v1/conversations/d:alice:bob/history",
                            "/v1/conversations/{conversation}/history")
        self.assertEqual(s, 200, d)
        return [m["body"] for m in d["messages"]]

if __name__ == "__main__":
    result = unittest.main(argv=[sys.argv[0], "-v", "WebhookReceipts"], exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"webhook receipts: {result.testsRun - failed - len(result.skipped)} passed, {failed} failed")
    sys.exit(1 if failed or result.testsRun == 0 else 0)
