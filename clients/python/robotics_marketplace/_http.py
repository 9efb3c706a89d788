"""One API call: JSON in and out, the API key, an Idempotency-Key per call on POST, and
retries with backoff on what a retry can fix (network errors, 409 idempotency_key_in_use,
429, 5xx). The standard library only."""

from __future__ import annotations

import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Mapping, Optional, Tuple, TypeVar

from . import __version__
from .errors import ApiError, ConnectionError, error_from_response

T = TypeVar("T")

#: Network faults a retry may get past: refused or reset connections, timeouts, a dropped answer.
NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionResetError, ConnectionRefusedError,
                  BrokenPipeError, socket.timeout, TimeoutError)


def retryable(error: BaseException) -> bool:
    """Whether the same request, sent again, may succeed: never a refusal of the request itself."""
    if isinstance(error, ApiError):
        if error.status == 409:
            return error.code == "idempotency_key_in_use"
        return error.status == 429 or error.status >= 500
    return isinstance(error, (ConnectionError,) + NETWORK_ERRORS)


class Retrying:
    """Exponential backoff with jitter: 0.5 s, 1 s, 2 s... capped at 8 s; a Retry-After up to 20 s wins."""

    def __init__(self, max_retries: int = 3, initial_delay: float = 0.5, max_delay: float = 8.0,
                 sleep: Callable[[float], None] = time.sleep):
        self.max_retries = max_retries
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.sleep = sleep

    def delay(self, attempt: int, error: BaseException) -> float:
        if isinstance(error, ApiError):
            after = error.headers.get("retry-after")
            if after and after.isdigit() and int(after) <= 20:
                return float(after)
        return min(self.max_delay, self.initial_delay * 2 ** attempt) * (0.5 + random.random() / 2)

    def run(self, call: Callable[[], T]) -> T:
        attempt = 0
        while True:
            try:
                return call()
            except Exception as error:  # noqa: BLE001 (sorted by retryable)
                if attempt >= self.max_retries or not retryable(error):
                    if isinstance(error, NETWORK_ERRORS):
                        raise ConnectionError(f"the service could not be reached: {error}") from error
                    raise
                self.sleep(self.delay(attempt, error))
                attempt += 1


class Transport:
    """Sends API requests to ``base_url`` (the service's root; a trailing ``/v1`` is accepted)."""

    def __init__(self, api_key: str, base_url: str, timeout: float, retrying: Retrying):
        if not api_key:
            raise ValueError("an API key is needed: pass api_key or set SVC_API_KEY")
        base = base_url.rstrip("/")
        self.base_url = base[:-3] if base.endswith("/v1") else base
        self.api_key = api_key
        self.timeout = timeout
        self.retrying = retrying

    def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None,
                idempotency_key: Optional[str] = None) -> Any:
        """The answer's JSON. A POST carries one Idempotency-Key for all of its attempts, so a
        retry of a request that did reach the service is not done twice."""
        url = self.base_url + path
        if query:
            pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None]
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        headers = {"authorization": f"Bearer {self.api_key}", "accept": "application/json",
                   "user-agent": f"robotics-marketplace-python/{__version__}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        if method == "POST":
            headers["idempotency-key"] = idempotency_key or str(uuid.uuid4())
        return self.retrying.run(lambda: self._once(method, url, data, headers))

    def _once(self, method: str, url: str, data: Optional[bytes], headers: Mapping[str, str]) -> Any:
        status, answer, text = send(urllib.request.Request(url, data=data, headers=dict(headers), method=method), self.timeout)
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = None
        if status >= 400:
            raise error_from_response(status, parsed, answer)
        return parsed


def send(request: urllib.request.Request, timeout: float) -> Tuple[int, Mapping[str, str], bytes]:
    """Status, lower-cased headers and body of one request; an HTTP error status is returned, not raised."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, _headers(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, _headers(error.headers), error.read()


def _headers(message: Any) -> Mapping[str, str]:
    return {k.lower(): v for k, v in (message.items() if message is not None else [])}


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
