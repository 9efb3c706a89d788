"""The running service the tests call: started once for the test run by tests/serve.js (a free
port, the embedded database in a temporary directory), or the one named by SVC_TEST_SERVICE
(the JSON line serve.js prints, for a service started by the caller)."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional

HERE = os.path.dirname(os.path.abspath(__file__))

_process: Optional[subprocess.Popen] = None
_service: Optional[Dict[str, Any]] = None

#: The sandbox checkout's card that pays (README, "Sell and buy in the sandbox").
PAYS = "4242424242424242"


def service() -> Dict[str, Any]:
    """``{ base_url, seller_key, buyer_key, admin_token }``, starting the service on first use."""
    global _process, _service
    if _service is None:
        given = os.environ.get("SVC_TEST_SERVICE")
        if given:
            _service = json.loads(given)
        else:
            _process = subprocess.Popen(["node", os.path.join(HERE, "serve.js")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            line = _process.stdout.readline()
            if not line:
                raise RuntimeError("tests/serve.js did not start the service (its stderr says why)")
            _service = json.loads(line)
    return _service


def stop() -> None:
    global _process
    if _process is not None:
        _process.stdin.close()
        _process.wait(timeout=30)
        _process.stdout.close()
        _process = None


def pay(checkout_url: str, card: str = PAYS) -> int:
    """Posts the hosted checkout form as a browser without JavaScript does; the HTTP status."""
    data = urllib.parse.urlencode({"card_number": card}).encode()
    request = urllib.request.Request(checkout_url, data=data, method="POST", headers={"content-type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
