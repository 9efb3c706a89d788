"""Moving a file's bytes to the signed URLs of an upload grant, as the ``svc`` CLI does
(src/cli/uploader.ts): one PUT, or, when the grant has ``multipart``, its parts several at
a time, each retried, completed with ``POST /v1/uploads/complete``. The ETags of the parts
done are kept in a state file, so calling the same upload again after an interruption sends
only the parts still missing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Mapping, Optional

from ._http import Retrying, Transport, send
from .errors import ApiError, NotFoundError, UploadError

#: The most part URLs one POST /v1/uploads/parts signs.
PART_URLS_PER_CALL = 100
#: Part URLs are signed again this long before they expire, rather than sent and refused.
EXPIRY_MARGIN_S = 300
#: A PUT with no byte moving for this long is dropped and retried.
IDLE_TIMEOUT_S = 120

Progress = Callable[[int, int], None]


class _UploadGone(Exception):
    """The multipart upload is no more (aborted, swept, or completed elsewhere): only a new grant helps."""


class _StorageRefused(Exception):
    def __init__(self, status: int, text: str):
        super().__init__(f"storage refused the upload (HTTP {status}): {text[:200]}")
        self.status = status


class _Slice:
    """``size`` bytes of a file from ``start``, read as http.client sends a body: in blocks."""

    def __init__(self, path: str, start: int, size: int):
        self._file = open(path, "rb")
        self._file.seek(start)
        self._left = size

    def read(self, n: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        n = self._left if n is None or n < 0 else min(n, self._left)
        chunk = self._file.read(n)
        self._left -= len(chunk)
        return chunk

    def close(self) -> None:
        self._file.close()


def put_file(url: str, path: str, start: int, size: int) -> Optional[str]:
    """PUTs the bytes with their exact length (S3 signs content-length); the answer's ETag."""
    body = _Slice(path, start, size)
    try:
        request = urllib.request.Request(url, data=body, method="PUT",  # type: ignore[arg-type]
                                         headers={"content-length": str(size), "content-type": "application/octet-stream"})
        status, headers, text = send(request, IDLE_TIMEOUT_S)
    finally:
        body.close()
    if status >= 300:
        raise _StorageRefused(status, text.decode("utf-8", "replace"))
    return headers.get("etag")


class Uploader:
    def __init__(self, transport: Transport, retrying: Retrying, parallel: int = 4, state_dir: Optional[str] = None):
        if not 1 <= parallel <= 32:
            raise ValueError("parallel must be from 1 to 32")
        self.transport = transport
        self.retrying = retrying
        self.parallel = parallel
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        self.state_dir = state_dir or os.path.join(cache, "robotics_marketplace", "uploads")

    def file(self, path: str, progress: Optional[Progress] = None) -> Dict[str, Any]:
        """Uploads a file for a model publish; the fields to pass on: ``storage_path``,
        ``file_name``, ``file_size``, ``file_extension``."""
        size = _stat(path).st_size
        name = os.path.basename(path)
        grant = self.send(path, "upload", lambda: self.transport.request("POST", "/v1/uploads", {"file_name": name, "file_size": size}), progress)
        landed = self.transport.request("PUT", "/v1/uploads", {"storage_path": grant["storage_path"]})
        if not landed.get("exists") or landed.get("size") != size:
            raise UploadError(f"the upload did not land whole ({landed.get('size')} of {size} bytes stored); upload it again")
        return {"storage_path": grant["storage_path"], "file_name": grant.get("file_name") or name, "file_size": size,
                "file_extension": grant.get("file_extension")}

    def send(self, path: str, target: str, mint: Callable[[], Mapping[str, Any]], progress: Optional[Progress] = None) -> Mapping[str, Any]:
        """Sends a file under a grant from ``mint`` (an upload or a shard grant). A multipart upload
        of this same file (path, size, mtime) to the same target, service and key that an earlier
        call left unfinished is resumed instead of minted again."""
        path = os.path.abspath(path)
        stat = _stat(path)
        report = progress or (lambda done, total: None)
        state_file = self._state_file(path, target)
        saved = _read_state(state_file)
        if saved and saved["size"] == stat.st_size and saved["mtime_ns"] == stat.st_mtime_ns:
            try:
                return self._send_parts(path, state_file, saved, None, report)
            except _UploadGone:
                os.remove(state_file)
        elif saved:
            # The file changed since: that upload can never complete.
            try:
                self.transport.request("POST", "/v1/uploads/abort", {"storage_path": saved["storage_path"], "upload_id": saved["upload_id"]})
            except ApiError:
                pass
            os.remove(state_file)
        grant = mint()
        multipart = grant.get("multipart")
        if not multipart:
            if not grant.get("upload_url"):
                raise UploadError("the grant has neither an upload URL nor parts", "bad_response")
            self.retrying.run(lambda: _storage_call(lambda: put_file(grant["upload_url"], path, 0, stat.st_size), resign=False))
            report(stat.st_size, stat.st_size)
            return grant
        state = {"version": 1, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "storage_path": grant["storage_path"],
                 "upload_id": multipart["upload_id"], "file_name": grant.get("file_name"), "file_extension": grant.get("file_extension"),
                 "part_size": multipart["part_size"], "part_count": multipart["part_count"], "etags": {}}
        _write_state(state_file, state)
        try:
            return self._send_parts(path, state_file, state, multipart, report)
        except _UploadGone:
            os.remove(state_file)
            raise UploadError("the upload was aborted or swept by the service; upload the file again", "upload_gone")

    def _state_file(self, path: str, target: str) -> str:
        key = hashlib.sha256(self.transport.api_key.encode()).hexdigest()
        name = hashlib.sha256(json.dumps([path, target, self.transport.base_url, key]).encode()).hexdigest()
        return os.path.join(self.state_dir, f"{name}.json")

    def _send_parts(self, path: str, state_file: str, state: Dict[str, Any], granted: Optional[Mapping[str, Any]], report: Progress) -> Mapping[str, Any]:
        parts = _Parts(self, path, state_file, state, granted, report)
        for round_ in (1, 2, 3):
            parts.send(parts.missing())
            if parts.complete(last_round=round_ == 3):
                os.remove(state_file)
                return {"storage_path": state["storage_path"], "upload_url": None, "file_name": state["file_name"], "file_extension": state["file_extension"]}
        raise UploadError("the store refused the parts three times", "upload_incomplete")


class _Parts:
    """The parts of one upload, ``parallel`` at a time; ETags go to the state file as they land."""

    def __init__(self, uploader: Uploader, path: str, state_file: str, state: Dict[str, Any], granted: Optional[Mapping[str, Any]], report: Progress):
        self.u = uploader
        self.path = path
        self.state_file = state_file
        self.state = state
        self.report = report
        self.lock = threading.Lock()
        self.urls: Dict[int, tuple] = {}
        if granted:
            self._keep(granted)
        report(self._landed_bytes(), state["size"])

    def missing(self) -> List[int]:
        return [n for n in range(1, self.state["part_count"] + 1) if str(n) not in self.state["etags"]]

    def size_of(self, n: int) -> int:
        s = self.state
        return s["part_size"] if n < s["part_count"] else s["size"] - s["part_size"] * (s["part_count"] - 1)

    def _landed_bytes(self) -> int:
        return sum(self.size_of(int(n)) for n in self.state["etags"])

    def send(self, numbers: List[int]) -> None:
        """The parts, ``parallel`` workers taking the next; after a failure no part is started."""
        if not numbers:
            return
        queue = list(numbers)
        failures: List[BaseException] = []

        def worker() -> None:
            while True:
                with self.lock:
                    if failures or not queue:
                        return
                    n = queue.pop(0)
                try:
                    self._send_one(n)
                except BaseException as error:  # noqa: BLE001 (reported below, with what was kept)
                    with self.lock:
                        failures.append(error)

        with ThreadPoolExecutor(max_workers=min(self.u.parallel, len(numbers))) as pool:
            for _ in range(min(self.u.parallel, len(numbers))):
                pool.submit(worker)
        if any(isinstance(e, _UploadGone) for e in failures):
            raise _UploadGone()
        if failures:
            left = len(self.missing())
            why = str(failures[0]) or type(failures[0]).__name__
            raise UploadError(f"{why}; {self.state['part_count'] - left} of {self.state['part_count']} parts are uploaded "
                              "and kept: call the same upload again to resume") from failures[0]

    def _send_one(self, n: int) -> None:
        def attempt() -> None:
            try:
                etag = put_file(self._url_of(n), self.path, (n - 1) * self.state["part_size"], self.size_of(n))
            except _StorageRefused as refused:
                if refused.status == 404:
                    raise _UploadGone() from refused
                if refused.status == 403:  # the URL expired: signed again on the next attempt
                    with self.lock:
                        self.urls.pop(n, None)
                raise
            if not etag:
                raise UploadError(f"storage answered part {n} without an ETag", "bad_response")
            with self.lock:
                self.state["etags"][str(n)] = etag
                _write_state(self.state_file, self.state)
                landed = self._landed_bytes()
            self.report(landed, self.state["size"])

        self.u.retrying.run(lambda: _storage_call(attempt))

    def _url_of(self, n: int) -> str:
        with self.lock:
            kept = self.urls.get(n)
            if kept and time.time() < kept[1] - EXPIRY_MARGIN_S:
                return kept[0]
            batch = [m for m in self.missing() if m >= n][:PART_URLS_PER_CALL] or [n]
            body = {"storage_path": self.state["storage_path"], "upload_id": self.state["upload_id"], "part_numbers": batch}
            try:
                self._keep(self.u.transport.request("POST", "/v1/uploads/parts", body))
            except ApiError as error:
                # An upload the API no longer knows (or a state file it does not recognise) cannot be resumed.
                if error.code in ("not_found", "validation_failed", "invalid_storage_path"):
                    raise _UploadGone() from error
                raise
            return self.urls[n][0]

    def _keep(self, view: Mapping[str, Any]) -> None:
        expires_at = time.time() + view["expires_in"]
        for part in view["parts"]:
            self.urls[part["part_number"]] = (part["url"], expires_at)

    def complete(self, last_round: bool) -> bool:
        """True once the file is whole at its path; False when the store refused a part (dropped, to be sent again)."""
        now = _stat(self.path)
        if now.st_size != self.state["size"] or now.st_mtime_ns != self.state["mtime_ns"]:
            raise UploadError(f"{self.path} changed while it was being uploaded; upload it again", "file_changed")
        parts = [{"part_number": n, "etag": self.state["etags"][str(n)]} for n in range(1, self.state["part_count"] + 1)]
        try:
            self.u.transport.request("POST", "/v1/uploads/complete", {"storage_path": self.state["storage_path"], "upload_id": self.state["upload_id"], "parts": parts})
            return True
        except NotFoundError:
            # Completed already, by a call stopped before it could remove the state file?
            landed = self.u.transport.request("PUT", "/v1/uploads", {"storage_path": self.state["storage_path"]})
            if landed.get("exists") and landed.get("size") == self.state["size"]:
                return True
            raise _UploadGone()
        except ApiError as error:
            refused = error.code == "validation_failed" and re.search(r'"parts\[(\d+)\]"', error.message)
            if not refused or last_round:
                raise
            self.state["etags"].pop(str(int(refused.group(1)) + 1), None)
            _write_state(self.state_file, self.state)
            return False


def _storage_call(call: Callable[[], Any], resign: bool = True) -> Any:
    """A storage answer that a retry may fix (5xx, 408, 429; an expired part URL, which the
    retry signs again) is raised as a network fault, which the retries take."""
    try:
        return call()
    except _StorageRefused as refused:
        if refused.status >= 500 or refused.status in (408, 429) or (resign and refused.status == 403):
            raise ConnectionResetError(str(refused)) from refused
        raise UploadError(str(refused), f"storage_{refused.status}") from refused


def _stat(path: str) -> os.stat_result:
    try:
        stat = os.stat(path)
    except OSError as error:
        raise UploadError(f"cannot read {path}: {error.strerror}", "usage") from error
    if not os.path.isfile(path):
        raise UploadError(f"{path} is not a file", "usage")
    return stat


def _read_state(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
        return state if state.get("version") == 1 and isinstance(state.get("etags"), dict) else None
    except (OSError, ValueError):
        return None


def _write_state(path: str, state: Mapping[str, Any]) -> None:
    """Written whole or not at all: a process killed mid-write leaves the previous state."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    temp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(state, f)
    os.replace(temp, path)
