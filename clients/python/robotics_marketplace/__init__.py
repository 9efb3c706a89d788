"""Python client of the robotics marketplace API: the standard library only.

    from robotics_marketplace import Client
    client = Client("svc_test_...", "http://127.0.0.1:3000")
    for model in client.models.list(type="onnx-model"):
        print(model["slug"])
"""

__version__ = "0.1.0"

from .client import Client  # noqa: E402
from .errors import (  # noqa: E402
    ApiError,
    AuthenticationError,
    ChecksumMismatchError,
    ConflictError,
    ConnectionError,
    InvalidRequestError,
    MarketplaceError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    SignatureVerificationError,
    UploadError,
)
from .paging import ListIterator, Page  # noqa: E402
from . import webhooks  # noqa: E402

__all__ = [
    "Client", "ApiError", "AuthenticationError", "ChecksumMismatchError", "ConflictError", "ConnectionError",
    "InvalidRequestError", "MarketplaceError", "NotFoundError", "PaymentRequiredError", "PermissionDeniedError",
    "RateLimitError", "ServerError", "SignatureVerificationError", "UploadError", "ListIterator", "Page", "webhooks",
]
