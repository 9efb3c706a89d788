"""The client: ``Client(api_key)`` and its resources, one per area of the API."""

from __future__ import annotations

import os
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Mapping, Optional

from ._http import Retrying, Transport
from .downloads import already_there, fetch_verified, safe_name
from .errors import UploadError
from .paging import ListIterator
from .uploads import Progress, Uploader

DEFAULT_BASE_URL = "http://127.0.0.1:3000"


def _q(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


class _Resource:
    def __init__(self, client: "Client"):
        self._client = client
        self._t = client._transport

    def _list(self, path: str, params: Mapping[str, Any]) -> ListIterator:
        return ListIterator(lambda query: self._t.request("GET", path, query=query), params)


class Models(_Resource):
    _path = "/v1/models"

    def list(self, **params: Any) -> ListIterator:
        """Every published model matching the filters (``q``, ``type``, ``category``, ``limit`` per page...), page after page."""
        return self._list(self._path, params)

    def retrieve(self, id_or_slug: str) -> Dict[str, Any]:
        return self._t.request("GET", f"{self._path}/{_q(id_or_slug)}")

    def create(self, file: Optional[str] = None, progress: Optional[Progress] = None, idempotency_key: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        """Publishes a model. With ``file``, uploads it first (in parts when large, resuming an
        interrupted upload) and fills in ``storage_path``, ``file_name``, ``file_size``, ``file_extension``."""
        if file is not None:
            fields.update(self._client.uploads.file(file, progress=progress))
        return self._t.request("POST", self._path, fields, idempotency_key=idempotency_key)

    def update(self, id_or_slug: str, **fields: Any) -> Dict[str, Any]:
        return self._t.request("PATCH", f"{self._path}/{_q(id_or_slug)}", fields)

    def delete(self, id_or_slug: str) -> Dict[str, Any]:
        """Unpublishes; buyers keep what they bought."""
        return self._t.request("DELETE", f"{self._path}/{_q(id_or_slug)}")

    def download(self, id_or_slug: str, dest: str = ".") -> str:
        """Downloads the model's file into ``dest`` (a directory, one ending in ``/`` made if
        missing, or a file path) and checks its size and sha256 against the published ones;
        returns the file's path."""
        grant = self._t.request("POST", f"{self._path}/{_q(id_or_slug)}/download")
        into_directory = os.path.isdir(dest) or dest.endswith(("/", os.sep))
        target = os.path.join(dest, safe_name(grant["file_name"])) if into_directory else dest
        return fetch_verified(self._t.retrying, grant["url"], target, grant.get("file_size"), grant.get("file_sha256"), self._t.timeout)


class Datasets(Models):
    _path = "/v1/datasets"

    def create(self, idempotency_key: Optional[str] = None, **fields: Any) -> Dict[str, Any]:  # type: ignore[override]
        """A dataset draft: upload its shards (``upload_dir``), then ``publish`` it."""
        return self._t.request("POST", self._path, fields, idempotency_key=idempotency_key)

    def publish(self, id_or_slug: str) -> Dict[str, Any]:
        return self._t.request("POST", f"{self._path}/{_q(id_or_slug)}/publish")

    def shards(self, id_or_slug: str) -> Dict[str, Any]:
        """``{ items: [{ name, size, sha256 }], count, total_bytes }``: what landed (a draft) or was published."""
        return self._t.request("GET", f"{self._path}/{_q(id_or_slug)}/shards")

    def upload_dir(self, directory: str, dataset: str, progress: Optional[Progress] = None) -> Dict[str, Any]:
        """Every file of ``directory`` as a shard of a dataset draft. A shard already landed whole
        (same name and size) is skipped and a large one resumes its parts, so calling it again
        after an interruption sends only what is missing."""
        names = sorted(e.name for e in os.scandir(directory) if e.is_file())
        if not names:
            raise UploadError(f"{directory} holds no files to upload", "usage")
        shards = f"{self._path}/{_q(dataset)}/shards"
        landed = {s["name"]: s["size"] for s in self._t.request("GET", shards)["items"]}
        uploader = self._client.uploads
        todo = [n for n in names if landed.get(n) != os.path.getsize(os.path.join(directory, n))]

        def one(name: str) -> None:
            path = os.path.join(directory, name)
            size = os.path.getsize(path)
            uploader.send(path, f"shard {dataset}/{name}", lambda: self._t.request("POST", shards, {"name": name, "size": size}), progress)

        _each(todo, one, uploader.parallel)
        after = self._t.request("GET", shards)
        whole = {(s["name"], s["size"]) for s in after["items"]}
        missing = [n for n in names if (n, os.path.getsize(os.path.join(directory, n))) not in whole]
        if missing:
            raise UploadError(f"{len(missing)} shard(s) did not land whole ({', '.join(missing)}); upload the directory again")
        return {"dataset": dataset, "uploaded": todo, "skipped": len(names) - len(todo), "count": after["count"], "total_bytes": after["total_bytes"]}

    def download(self, id_or_slug: str, dest: str = ".") -> List[str]:  # type: ignore[override]
        """Every shard of the dataset into the directory ``dest``, each checked against its published
        size and sha256; a shard already there with that sha256 is not fetched again. Returns the paths."""
        os.makedirs(dest, exist_ok=True)
        listed = self.shards(id_or_slug)["items"]
        paths: List[str] = []

        def one(shard: Mapping[str, Any]) -> None:
            target = os.path.join(dest, safe_name(shard["name"]))
            paths.append(target)
            if already_there(target, shard["size"], shard.get("sha256")):
                return
            got = self._t.request("GET", f"{self._path}/{_q(id_or_slug)}/shards/{_q(shard['name'])}")
            fetch_verified(self._t.retrying, got["url"], target, got["size"], got.get("sha256"), self._t.timeout)

        _each(listed, one, self._client.uploads.parallel)
        return sorted(paths)


class Uploads(_Resource):
    def __init__(self, client: "Client", parallel: int, state_dir: Optional[str]):
        super().__init__(client)
        self._uploader = Uploader(self._t, self._t.retrying, parallel, state_dir)
        self.parallel = parallel

    def limits(self) -> Dict[str, Any]:
        """``{ max_bytes, extensions }``."""
        return self._t.request("GET", "/v1/uploads")

    def file(self, path: str, progress: Optional[Progress] = None) -> Dict[str, Any]:
        """Uploads a file (in parts above the service's threshold, ``parallel`` at a time; an
        interrupted upload of the same file resumes). Returns the fields a model publish takes."""
        return self._uploader.file(path, progress)

    def send(self, path: str, target: str, mint: Any, progress: Optional[Progress] = None) -> Mapping[str, Any]:
        return self._uploader.send(path, target, mint, progress)


class Purchases(_Resource):
    def create(self, asset: str, idempotency_key: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        """A checkout session: send the buyer to its ``checkout_url``. The purchase is recorded when it is paid."""
        return self._t.request("POST", "/v1/purchases", {"asset": asset, **fields}, idempotency_key=idempotency_key)

    def list(self, **params: Any) -> ListIterator:
        return self._list("/v1/purchases", params)


class _Listed(_Resource):
    _path = ""

    def list(self, **params: Any) -> ListIterator:
        return self._list(self._path, params)

    def retrieve(self, id: str) -> Dict[str, Any]:
        return self._t.request("GET", f"{self._path}/{_q(id)}")


class BalanceTransactions(_Listed):
    _path = "/v1/balance_transactions"


class Payouts(_Listed):
    _path = "/v1/payouts"


class Events(_Listed):
    _path = "/v1/events"


class WebhookEndpoints(_Listed):
    _path = "/v1/webhook_endpoints"

    def create(self, url: str, events: List[str], description: Optional[str] = None) -> Dict[str, Any]:
        """The answer carries the signing ``secret``, this once."""
        body: Dict[str, Any] = {"url": url, "events": events}
        if description is not None:
            body["description"] = description
        return self._t.request("POST", self._path, body)

    def update(self, id: str, **fields: Any) -> Dict[str, Any]:
        return self._t.request("PATCH", f"{self._path}/{_q(id)}", fields)

    def delete(self, id: str) -> Dict[str, Any]:
        return self._t.request("DELETE", f"{self._path}/{_q(id)}")

    def send_test(self, id: str) -> Dict[str, Any]:
        """Queues one signed ``webhook.test`` event to this endpoint alone."""
        return self._t.request("POST", f"{self._path}/{_q(id)}/test")


class Client:
    """``Client(api_key=None, base_url=None)``: the key defaults to ``SVC_API_KEY``, the URL to
    ``SVC_URL`` or http://127.0.0.1:3000 (the service's root; a trailing ``/v1`` is accepted).

    Every call is retried up to ``max_retries`` times, with backoff, on network errors, 409
    ``idempotency_key_in_use``, 429 and 5xx; a POST sends one ``Idempotency-Key`` for all its
    attempts (yours, with ``idempotency_key=``, or one it generates)."""

    def __init__(self, api_key: Optional[str] = None, base_url: Optional[str] = None, *, max_retries: int = 3,
                 timeout: float = 60.0, parallel: int = 4, upload_state_dir: Optional[str] = None):
        self._transport = Transport(api_key or os.environ.get("SVC_API_KEY", ""), base_url or os.environ.get("SVC_URL") or DEFAULT_BASE_URL,
                                    timeout, Retrying(max_retries))
        self.models = Models(self)
        self.datasets = Datasets(self)
        self.uploads = Uploads(self, parallel, upload_state_dir)
        self.purchases = Purchases(self)
        self.balance_transactions = BalanceTransactions(self)
        self.payouts = Payouts(self)
        self.events = Events(self)
        self.webhook_endpoints = WebhookEndpoints(self)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None,
                idempotency_key: Optional[str] = None) -> Any:
        """Any API call, e.g. ``client.request("GET", "/v1/balance")``; errors typed and retried as every call's."""
        return self._transport.request(method.upper(), path, body, query, idempotency_key)

    def me(self) -> Dict[str, Any]:
        return self.request("GET", "/v1/me")

    def balance(self) -> Dict[str, Any]:
        return self.request("GET", "/v1/balance")

    def usage(self, days: Optional[int] = None) -> Dict[str, Any]:
        return self.request("GET", "/v1/usage", query={"days": days})


def _each(items: List[Any], work: Any, parallel: int) -> None:
    """``work`` over the items, ``parallel`` at a time; the first failure is raised once all have stopped."""
    if not items:
        return
    with ThreadPoolExecutor(max_workers=min(parallel, len(items))) as pool:
        futures = [pool.submit(work, item) for item in items]
    for future in futures:
        error = future.exception()
        if error is not None:
            raise error
