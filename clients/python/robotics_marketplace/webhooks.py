"""Verifying a webhook delivery (docs/webhooks.md): the ``svc-signature`` header is
``t=<unix seconds>,v1=<hex>[,v1=<hex>...]``, each ``v1`` the HMAC-SHA256, keyed with the
endpoint's secret, of ``<t>.<raw body>``; the scheme of Stripe's, several ``v1`` while a
rolled secret still signs. The same checks as the service's own verifier
(src/webhooks/verify-signature.ts)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any, Dict, Optional, Union

from .errors import SignatureVerificationError

HEADER = "svc-signature"
DEFAULT_TOLERANCE = 300


def construct_event(payload: Union[bytes, str], header: Optional[str], secret: str,
                    tolerance: int = DEFAULT_TOLERANCE, now: Optional[float] = None) -> Dict[str, Any]:
    """The event of a delivery, verified. ``payload`` must be the body's bytes as received:
    re-serialized JSON does not verify. Raises SignatureVerificationError (answer it 400)."""
    if not header:
        raise SignatureVerificationError(f"missing {HEADER} header")
    timestamp: Optional[int] = None
    signatures = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1" and value:
            signatures.append(value)
    if timestamp is None:
        raise SignatureVerificationError(f"{HEADER} has no valid t")
    if not signatures:
        raise SignatureVerificationError(f"{HEADER} has no v1")
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        raise SignatureVerificationError(f"{HEADER} timestamp is outside the tolerance")
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    expected = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise SignatureVerificationError("no v1 signature matches the body")
    return json.loads(body.decode("utf-8"))


def sign(payload: Union[bytes, str], secret: str, timestamp: Optional[int] = None) -> str:
    """A ``svc-signature`` header for a payload, as the service signs: for tests of a receiver."""
    t = int(time.time()) if timestamp is None else timestamp
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    return f"t={t},v1=" + hmac.new(secret.encode("utf-8"), f"{t}.".encode("ascii") + body, hashlib.sha256).hexdigest()
