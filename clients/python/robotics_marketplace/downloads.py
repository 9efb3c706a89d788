"""Downloads with their checks: the bytes go to a temporary file beside the destination, are
hashed as they arrive, and are renamed into place only when size and sha256 are the ones the
service published. A file that does not match is deleted, never left looking complete."""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from typing import Optional

from ._http import Retrying
from .errors import ChecksumMismatchError

CHUNK = 1024 * 1024


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_verified(retrying: Retrying, url: str, destination: str, size: Optional[int], sha256: Optional[str], timeout: float) -> str:
    """GETs a signed URL (no API key: it is not the API) into ``destination``; returns its path."""
    directory = os.path.dirname(os.path.abspath(destination))
    os.makedirs(directory, exist_ok=True)

    def once() -> str:
        fd, temp = tempfile.mkstemp(prefix=".download-", dir=directory)
        try:
            digest, length = hashlib.sha256(), 0
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(urllib.request.Request(url), timeout=timeout) as response:
                for block in iter(lambda: response.read(CHUNK), b""):
                    digest.update(block)
                    length += len(block)
                    out.write(block)
            name = os.path.basename(destination)
            # A transfer broken midway raises http.client's IncompleteRead (retried); a whole
            # answer of another length is other bytes than the ones published.
            if size is not None and length != size:
                raise ChecksumMismatchError(name, f"{size} bytes", f"{length} bytes")
            if sha256 and digest.hexdigest() != sha256:
                raise ChecksumMismatchError(name, f"sha256 {sha256}", f"sha256 {digest.hexdigest()}")
            os.replace(temp, destination)
            return destination
        except BaseException:
            if os.path.exists(temp):
                os.remove(temp)
            raise

    return retrying.run(once)


def already_there(path: str, size: Optional[int], sha256: Optional[str]) -> bool:
    """A file kept from an earlier download that is exactly the published one is not fetched again."""
    return bool(sha256) and os.path.isfile(path) and os.path.getsize(path) == size and sha256_of(path) == sha256


def safe_name(name: str) -> str:
    """A name the service gave, as a file name: never a path out of the destination directory."""
    base = os.path.basename(name.replace("\\", "/"))
    if base in ("", ".", ".."):
        raise ValueError(f"the service named a file {name!r}, which is not a file name")
    return base

