"""Logging through Powertools, built on first use so that importing the app stays cheap."""
from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_logger: Any = None


def logger() -> Any:
    """The one Logger of the process. Built under a lock: two Powertools Loggers of one service, built at
    once by parallel requests, share a handler whose formatter ends up broken (every log call raises)."""
    global _logger
    if _logger is None:
        with _lock:
            if _logger is None:
                from aws_lambda_powertools import Logger

                _logger = Logger(service="pas")
    return _logger
