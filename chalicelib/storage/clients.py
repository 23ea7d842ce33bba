"""boto3 clients, created lazily on first use (cold start stays cheap) and resettable for tests."""
from __future__ import annotations

from functools import cache
from typing import Any

from chalicelib.settings import settings


@cache
def client(service: str) -> Any:
    import boto3  # deferred: importing boto3 costs ~100 ms of cold start
    from botocore.config import Config

    current = settings()
    # Locally and in the tests botocore checks every request against the service model (moto is more
    # lenient than AWS); deployed, AWS checks them itself, and the client-side walk of every request was
    # 15-20 % of an auto-renewal's CPU (benchmarks/README, auto_renewal.py).
    config = Config(retries={"max_attempts": 4, "mode": "standard"}, connect_timeout=2, read_timeout=10,
                    parameter_validation=current.is_local)
    return boto3.session.Session().client(
        service, region_name=current.region, endpoint_url=current.aws_endpoint_url, config=config
    )


def dynamodb() -> Any:
    return client("dynamodb")


def s3() -> Any:
    return client("s3")


def sqs() -> Any:
    return client("sqs")


def reset() -> None:
    """Drop every cached client, so the next call builds one against the current environment."""
    client.cache_clear()
