"""Typed errors. The API answers every error as ``{"error": {"code", "message", "request_id", ...}}``;
``code`` is stable and is what callers branch on."""

from __future__ import annotations

from typing import Any, Mapping, Optional


class MarketplaceError(Exception):
    """Base of every error this client raises."""


class ApiError(MarketplaceError):
    """The API answered an error. ``request_id`` is the one to quote to support."""

    def __init__(self, status: int, code: str, message: str, request_id: Optional[str] = None,
                 body: Optional[Mapping[str, Any]] = None, headers: Optional[Mapping[str, str]] = None):
        super().__init__(f"{status} {code}: {message}" + (f" (request {request_id})" if request_id else ""))
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        #: The whole ``error`` object, with any extra fields (``param``, ``scopes``, ``price``...).
        self.error: Mapping[str, Any] = dict((body or {}).get("error") or {}) if isinstance(body, Mapping) else {}
        self.param = self.error.get("param")
        self.headers = dict(headers or {})


class InvalidRequestError(ApiError):
    """400: the request was refused; ``param`` names the field when there is one."""


class AuthenticationError(ApiError):
    """401: no key, or a malformed, unknown, revoked or expired one."""


class PaymentRequiredError(ApiError):
    """402: ``purchase_required`` (buy the asset first) or ``payment_required``."""


class PermissionDeniedError(ApiError):
    """403: the key lacks a scope (``scope_required``) or the action is not allowed."""


class NotFoundError(ApiError):
    """404: no such resource, or another account's (never 403)."""


class ConflictError(ApiError):
    """409: a concurrent change, or an Idempotency-Key still in use by another request."""


class RateLimitError(ApiError):
    """429: too many requests; retried with backoff before it reaches the caller."""


class ServerError(ApiError):
    """5xx: retried with backoff before it reaches the caller."""


class ConnectionError(MarketplaceError):  # noqa: A001 (the client's own, as requests' and openai's)
    """The service could not be reached, or the connection broke, after every retry."""


class ChecksumMismatchError(MarketplaceError):
    """A downloaded file is not the one published: its size or sha256 differs. Nothing was kept."""

    def __init__(self, name: str, expected: str, actual: str):
        super().__init__(f"{name}: expected {expected}, got {actual}; the download was discarded")
        self.name = name
        self.expected = expected
        self.actual = actual


class UploadError(MarketplaceError):
    """An upload did not complete. Parts already landed are kept: call the same upload again to resume."""

    def __init__(self, message: str, code: str = "upload_incomplete"):
        super().__init__(message)
        self.code = code


class SignatureVerificationError(MarketplaceError):
    """A webhook delivery that does not verify: answer it 400."""


_BY_STATUS = {400: InvalidRequestError, 401: AuthenticationError, 402: PaymentRequiredError, 403: PermissionDeniedError,
              404: NotFoundError, 409: ConflictError, 429: RateLimitError}


def error_from_response(status: int, body: Any, headers: Mapping[str, str]) -> ApiError:
    """The typed error of an API answer; an answer without our envelope (a proxy's page) still gets one."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        code = str(error.get("code") or "unknown_error")
        message = str(error.get("message") or "")
        request_id = error.get("request_id")
    else:
        code, message, request_id = f"http_{status}", f"HTTP {status} without an error body", None
    request_id = request_id or headers.get("x-request-id")
    cls = ServerError if status >= 500 else _BY_STATUS.get(status, ApiError)
    return cls(status, code, message, request_id, body if isinstance(body, Mapping) else None, headers)
