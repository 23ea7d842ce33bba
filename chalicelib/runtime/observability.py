"""Logging through Powertools, built on first use so that importing the app stays cheap."""
from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def logger() -> Any:
    from aws_lambda_powertools import Logger

    return Logger(service="pas")
