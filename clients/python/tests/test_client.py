"""The Python client against a running service (tests/serve.js): publish, buy through the
sandbox checkout, download with checks, pages, errors, retries, uploads in parts with resume,
datasets, and a webhook delivery verified."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import unittest
import uuid

import robotics_marketplace as rm
from robotics_marketplace import webhooks
from robotics_marketplace.downloads import fetch_verified

from .files import jsonl_episode, onnx_model
from .service import pay, service, stop

MIB = 1024 * 1024


def setUpModule() -> None:
    service()


def tearDownModule() -> None:
    stop()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Base(unittest.TestCase):
    def setUp(self) -> None:
        s = service()
        self.tmp = tempfile.mkdtemp(prefix="pyclient-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        state = os.path.join(self.tmp, "upload-state")
        self.seller = rm.Client(s["seller_key"], s["base_url"], upload_state_dir=state)
        self.buyer = rm.Client(s["buyer_key"], s["base_url"] + "/v1", upload_state_dir=state)

    def write(self, name: str, data: bytes) -> str:
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def publish(self, data: bytes, price_cents: int, **fields) -> dict:
        path = self.write(f"policy-{uuid.uuid4().hex[:8]}.onnx", data)
        return self.seller.models.create(file=path, title=f"Grasp Policy {uuid.uuid4().hex[:6]}", type="rl-policy",
                                         license="MIT", price_cents=price_cents, **fields)


class PublishBuyDownload(Base):
    def test_a_buyer_pays_in_the_sandbox_checkout_then_downloads_the_published_bytes(self) -> None:
        receiver = Receiver()
        self.addCleanup(receiver.close)
        endpoint = self.seller.webhook_endpoints.create(receiver.url, ["listing.purchased"])
        self.addCleanup(self.seller.webhook_endpoints.delete, endpoint["id"])
        weights = onnx_model(os.urandom(64 * 1024))
        model = self.publish(weights, 2500)
        self.assertEqual(model["price"], {"amount": 2500, "currency": "usd"})
        self.assertEqual(model["file"]["size"], len(weights))

        # Before paying: 402 purchase_required, typed, with its request id; nothing is written.
        out = os.path.join(self.tmp, "out")
        os.mkdir(out)
        with self.assertRaises(rm.PaymentRequiredError) as refused:
            self.buyer.models.download(model["slug"], out)
        self.assertEqual(refused.exception.code, "purchase_required")
        self.assertTrue(refused.exception.request_id)
        self.assertEqual(os.listdir(out), [])

        session = self.buyer.purchases.create(model["slug"])
        self.assertEqual((session["object"], session["status"], session["amount_cents"]), ("checkout_session", "requires_payment", 2500))
        self.assertEqual(pay(session["checkout_url"]), 200)

        path = self.buyer.models.download(model["slug"], out)
        self.assertEqual(os.path.dirname(path), out)
        with open(path, "rb") as f:
            self.assertEqual(sha256(f.read()), sha256(weights))
        self.assertEqual(os.listdir(out), [os.path.basename(path)])
        bought = [p for p in self.buyer.purchases.list() if (p.get("asset") or p.get("listing") or {}).get("slug") == model["slug"]]
        self.assertEqual(len(bought), 1)

        # The seller hears of the sale, signed with the endpoint's secret.
        body, header = receiver.wait_for(lambda event: event["type"] == "listing.purchased")
        event = webhooks.construct_event(body, header, endpoint["secret"])
        self.assertEqual(event["data"]["listing"]["slug"], model["slug"])
        self.assertEqual(event["data"]["purchase"]["id"], bought[0]["id"])
        with self.assertRaises(rm.SignatureVerificationError):
            webhooks.construct_event(body.replace(b"2500", b"25"), header, endpoint["secret"])

    def test_a_download_whose_bytes_are_not_the_published_ones_is_refused_and_not_kept(self) -> None:
        v1 = onnx_model(b"weights v1")
        model = self.publish(v1, 0)
        grant = self.seller.request("POST", f"/v1/models/{model['slug']}/download")
        target = os.path.join(self.tmp, "policy.onnx")
        retrying = self.seller._transport.retrying
        with self.assertRaises(rm.ChecksumMismatchError):
            fetch_verified(retrying, grant["url"], target, grant["file_size"], sha256(b"other bytes"), 30)
        with self.assertRaises(rm.ChecksumMismatchError):
            fetch_verified(retrying, grant["url"], target, grant["file_size"] + 1, None, 30)
        self.assertEqual(os.listdir(self.tmp), [os.path.basename(p) for p in os.listdir(self.tmp) if p.startswith("policy-")])
        # The published sha256 is the one the client checks against.
        self.assertEqual(grant["file_sha256"], sha256(v1))
        self.assertEqual(fetch_verified(retrying, grant["url"], target, grant["file_size"], grant["file_sha256"], 30), target)


class Paging(Base):
    def test_iterating_a_list_walks_every_page_in_order(self) -> None:
        for _ in range(5):
            self.publish(onnx_model(os.urandom(64)), 0)
        whole = self.seller.models.list(limit=100)
        self.assertFalse(whole.first_page.has_more)
        everything = [m["id"] for m in whole]
        self.assertGreaterEqual(len(everything), 5)

        paged = self.seller.models.list(limit=2)
        pages = list(paged.pages())
        self.assertEqual(len(pages), (len(everything) + 1) // 2)
        self.assertTrue(all(len(p.items) == 2 for p in pages[:-1]))
        self.assertEqual([m["id"] for m in self.seller.models.list(limit=2)], everything)

    def test_filters_are_sent_with_every_page(self) -> None:
        ids = [m["id"] for m in self.seller.models.list(type="rl-policy", limit=1)]
        self.assertEqual(ids, [m["id"] for m in self.seller.models.list(type="rl-policy", limit=100)])
        self.assertEqual(list(self.seller.models.list(type="no-such-type", limit=1)), [])


class Errors(Base):
    def test_an_error_carries_code_message_and_the_request_id_of_its_answer(self) -> None:
        with self.assertRaises(rm.NotFoundError) as missing:
            self.buyer.models.retrieve("no-such-model")
        e = missing.exception
        self.assertEqual((e.status, e.code), (404, "not_found"))
        self.assertTrue(e.message)
        self.assertRegex(e.request_id, r"\S+")
        self.assertEqual(e.headers.get("x-request-id"), e.request_id)

        with self.assertRaises(rm.InvalidRequestError) as low:
            self.publish(b"cheap", 50)
        self.assertEqual(low.exception.code, "price_too_low")
        self.assertTrue(low.exception.request_id)

        with self.assertRaises(rm.AuthenticationError) as bad:
            rm.Client("svc_test_" + "x" * 40, service()["base_url"]).me()
        self.assertIn(bad.exception.code, ("invalid_key",))

    def test_a_missing_key_is_refused_before_any_request(self) -> None:
        env = os.environ.pop("SVC_API_KEY", None)
        try:
            with self.assertRaises(ValueError):
                rm.Client(None, service()["base_url"])
        finally:
            if env is not None:
                os.environ["SVC_API_KEY"] = env


class StubServer:
    """An HTTP server answering from a script of (status, body) in turn, recording each request's headers."""

    def __init__(self, script):
        self.script = list(script)
        self.seen = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.seen.append({k.lower(): v for k, v in self.headers.items()})
                status, body = outer.script.pop(0)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("x-request-id", f"req_{len(outer.seen)}")
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST  # noqa: N815

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def error(code: str) -> dict:
    return {"error": {"code": code, "message": code.replace("_", " ")}}


class Retries(unittest.TestCase):
    def client(self, url: str, retries: int = 3) -> rm.Client:
        c = rm.Client("svc_test_key", url, max_retries=retries)
        c._transport.retrying.initial_delay = 0.01
        return c

    def stub(self, script) -> StubServer:
        s = StubServer(script)
        self.addCleanup(s.close)
        return s

    def test_a_post_is_retried_on_503_429_and_idempotency_key_in_use_with_one_idempotency_key(self) -> None:
        s = self.stub([(503, error("service_unavailable")), (429, error("rate_limited")), (409, error("idempotency_key_in_use")), (201, {"id": "cs_1"})])
        self.assertEqual(self.client(s.url).purchases.create("grasp"), {"id": "cs_1"})
        keys = {h["idempotency-key"] for h in s.seen}
        self.assertEqual(len(s.seen), 4)
        self.assertEqual(len(keys), 1)
        self.assertRegex(keys.pop(), r"^[0-9a-f-]{36}$")
        # The next call is another key.
        s.script.append((201, {"id": "cs_2"}))
        self.client(s.url).purchases.create("grasp")
        self.assertNotEqual(s.seen[-1]["idempotency-key"], s.seen[0]["idempotency-key"])

    def test_a_key_given_by_the_caller_is_the_one_sent(self) -> None:
        s = self.stub([(201, {"id": "cs_1"})])
        self.client(s.url).purchases.create("grasp", idempotency_key="order-42")
        self.assertEqual(s.seen[0]["idempotency-key"], "order-42")

    def test_a_refusal_is_not_retried_and_a_plain_conflict_neither(self) -> None:
        s = self.stub([(400, error("validation_failed")), (409, error("conflict"))])
        with self.assertRaises(rm.InvalidRequestError):
            self.client(s.url).purchases.create("grasp")
        with self.assertRaises(rm.ConflictError) as conflict:
            self.client(s.url).purchases.create("grasp")
        self.assertEqual(len(s.seen), 2)
        self.assertEqual(conflict.exception.request_id, "req_2")

    def test_after_the_last_retry_the_5xx_reaches_the_caller_typed(self) -> None:
        s = self.stub([(503, error("service_unavailable"))] * 3)
        with self.assertRaises(rm.ServerError) as failed:
            self.client(s.url, retries=2).me()
        self.assertEqual((failed.exception.status, failed.exception.code, len(s.seen)), (503, "service_unavailable", 3))

    def test_a_service_out_of_reach_is_a_connection_error_after_the_retries(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        started = time.monotonic()
        with self.assertRaises(rm.ConnectionError):
            self.client(f"http://127.0.0.1:{port}", retries=2).me()
        self.assertLess(time.monotonic() - started, 5)


class Uploads(Base):
    def test_a_large_file_goes_in_parts_and_an_interrupted_upload_resumes_with_the_missing_parts_only(self) -> None:
        data = onnx_model(os.urandom(11 * MIB))  # 3 parts at the test service's part size of 5 MiB
        path = self.write("big-policy.onnx", data)

        class Interrupted(Exception):
            pass

        def interrupt(done, total):
            if done > 0:
                raise Interrupted()

        seller = rm.Client(service()["seller_key"], service()["base_url"], parallel=1, upload_state_dir=os.path.join(self.tmp, "state"))
        with self.assertRaises(rm.UploadError) as stopped:
            seller.uploads.file(path, progress=interrupt)
        self.assertIn("1 of 3 parts are uploaded and kept", str(stopped.exception))

        reports = []
        fields = seller.uploads.file(path, progress=lambda done, total: reports.append(done))
        # The first report is the part kept from the first call; then one per part sent now.
        self.assertEqual(reports, [5 * MIB, 10 * MIB, len(data)])
        self.assertEqual((fields["file_name"], fields["file_size"], fields["file_extension"]), ("big-policy.onnx", len(data), ".onnx"))
        self.assertEqual(os.listdir(os.path.join(self.tmp, "state")), [])

        model = seller.models.create(title=f"Big Policy {uuid.uuid4().hex[:6]}", type="rl-policy", license="MIT", price_cents=0, **fields)
        downloaded = self.buyer.models.download(model["slug"], os.path.join(self.tmp, "big-copy.onnx"))
        with open(downloaded, "rb") as f:
            self.assertEqual(sha256(f.read()), sha256(data))

    def test_a_file_changed_since_the_interruption_is_uploaded_afresh_not_joined_to_old_parts(self) -> None:
        path = self.write("changing.onnx", onnx_model(os.urandom(11 * MIB)))
        state_dir = os.path.join(self.tmp, "state")
        seller = rm.Client(service()["seller_key"], service()["base_url"], parallel=1, upload_state_dir=state_dir)

        def interrupt(done, total):
            if done > 0:
                raise KeyboardInterrupt()

        with self.assertRaises(rm.UploadError) as stopped:
            seller.uploads.file(path, progress=interrupt)
        self.assertIn("KeyboardInterrupt; 1 of 3 parts are uploaded and kept", str(stopped.exception))
        data = onnx_model(os.urandom(11 * MIB))
        with open(path, "wb") as f:
            f.write(data)
        reports = []
        fields = seller.uploads.file(path, progress=lambda done, total: reports.append(done))
        self.assertEqual(reports, [0, 5 * MIB, 10 * MIB, len(data)])
        model = seller.models.create(title=f"Changed {uuid.uuid4().hex[:6]}", type="rl-policy", license="MIT", price_cents=0, **fields)
        # A directory named with a trailing slash is made, and the file keeps its published name.
        copy = self.buyer.models.download(model["slug"], os.path.join(self.tmp, "copies") + "/")
        self.assertEqual(copy, os.path.join(self.tmp, "copies", "changing.onnx"))
        with open(copy, "rb") as f:
            self.assertEqual(sha256(f.read()), sha256(data))

    def test_a_file_that_cannot_be_read_is_refused_before_any_grant(self) -> None:
        with self.assertRaises(rm.UploadError) as missing:
            self.seller.uploads.file(os.path.join(self.tmp, "nope.onnx"))
        self.assertEqual(missing.exception.code, "usage")


class Datasets(Base):
    def test_a_directory_becomes_shards_and_a_buyer_downloads_the_whole_dataset_checked(self) -> None:
        source = os.path.join(self.tmp, "episodes")
        os.mkdir(source)
        shards = {f"episode-{i}.jsonl": jsonl_episode(i, 10 + i, os.urandom(16)) for i in range(3)}
        for name, data in shards.items():
            with open(os.path.join(source, name), "wb") as f:
                f.write(data)
        dataset = self.seller.datasets.create(title=f"Bin picking {uuid.uuid4().hex[:6]}", description="Episodes", price_cents=0)
        sent = self.seller.datasets.upload_dir(source, dataset["id"])
        self.assertEqual((sorted(sent["uploaded"]), sent["skipped"], sent["count"]), (sorted(shards), 0, 3))
        again = self.seller.datasets.upload_dir(source, dataset["id"])
        self.assertEqual((again["uploaded"], again["skipped"]), ([], 3))
        self.seller.datasets.publish(dataset["id"])

        dest = os.path.join(self.tmp, "copy")
        paths = self.buyer.datasets.download(dataset["slug"], dest)
        self.assertEqual([os.path.basename(p) for p in paths], sorted(shards))
        for p in paths:
            with open(p, "rb") as f:
                self.assertEqual(sha256(f.read()), sha256(shards[os.path.basename(p)]))
        listed = {s["name"]: s["sha256"] for s in self.buyer.datasets.shards(dataset["slug"])["items"]}
        self.assertEqual(listed, {n: sha256(d) for n, d in shards.items()})

        # A shard changed locally is fetched again; the others are kept as they are.
        damaged = os.path.join(dest, "episode-1.jsonl")
        with open(damaged, "wb") as f:
            f.write(b"damaged")
        kept = os.stat(os.path.join(dest, "episode-0.jsonl")).st_mtime_ns
        self.buyer.datasets.download(dataset["slug"], dest)
        with open(damaged, "rb") as f:
            self.assertEqual(f.read(), shards["episode-1.jsonl"])
        self.assertEqual(os.stat(os.path.join(dest, "episode-0.jsonl")).st_mtime_ns, kept)


class Receiver:
    """A webhook receiver that keeps each delivery's raw body and headers, answering 204."""

    def __init__(self):
        self.deliveries = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.deliveries.append((body, self.headers.get(webhooks.HEADER)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def wait_for(self, match, seconds: float = 20):
        """The first delivery whose event matches, waiting for it."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for body, header in list(self.deliveries):
                if match(json.loads(body)):
                    return body, header
            time.sleep(0.1)
        raise AssertionError(f"no matching delivery within {seconds} s; got {len(self.deliveries)}")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Webhooks(Base):
    def test_a_delivery_verifies_with_the_endpoint_secret_and_a_tampered_one_does_not(self) -> None:
        receiver = Receiver()
        self.addCleanup(receiver.close)
        endpoint = self.seller.webhook_endpoints.create(receiver.url, ["payout.paid"], "python client test")
        self.addCleanup(self.seller.webhook_endpoints.delete, endpoint["id"])
        secret = endpoint["secret"]
        sent = self.seller.webhook_endpoints.send_test(endpoint["id"])
        body, header = receiver.wait_for(lambda event: event["id"] == sent["event_id"])

        event = webhooks.construct_event(body, header, secret)
        self.assertEqual((event["id"], event["type"]), (sent["event_id"], "webhook.test"))
        self.assertEqual(event["data"]["endpoint"]["id"], endpoint["id"])

        tampered = body.replace(b"webhook.test", b"payout.paid!")
        self.assertNotEqual(tampered, body)
        for bad_body, bad_header, bad_secret, why in [
            (tampered, header, secret, "no v1 signature matches"),
            (body, header.replace("v1=", "v1=0"), secret, "no v1 signature matches"),
            (body, header, secret + "x", "no v1 signature matches"),
            (body, "", secret, "missing"),
            (body, header.split(",")[0], secret, "no v1"),
        ]:
            with self.assertRaises(rm.SignatureVerificationError) as refused:
                webhooks.construct_event(bad_body, bad_header, bad_secret)
            self.assertIn(why, str(refused.exception))
        # Outside the tolerance: an old delivery replayed.
        t = int(header.split(",")[0][2:])
        with self.assertRaises(rm.SignatureVerificationError):
            webhooks.construct_event(body, header, secret, now=t + 301)
        self.assertEqual(webhooks.construct_event(body, header, secret, now=t + 299)["id"], event["id"])

    def test_several_v1_entries_verify_with_either_secret(self) -> None:
        body = b'{"id":"evt_1","type":"payout.paid","created":1,"data":{}}'
        new, old = webhooks.sign(body, "whsec_new", 1_800_000_000), webhooks.sign(body, "whsec_old", 1_800_000_000)
        header = f"{new},{old.split(',')[1]}"
        for secret in ("whsec_new", "whsec_old"):
            self.assertEqual(webhooks.construct_event(body, header, secret, now=1_800_000_000)["id"], "evt_1")
        with self.assertRaises(rm.SignatureVerificationError):
            webhooks.construct_event(body, header, "whsec_other", now=1_800_000_000)


if __name__ == "__main__":
    unittest.main()
