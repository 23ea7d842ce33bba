"""The file of an upload, for the routes that take `?uploadLocator=` instead of a file body (DECISIONS.md
"Uploads"; http/contract.py, `Upload.purpose`). The uploads domain sits above the edge, so its function is
wired here by the composition root (app.py), and @endpoint asks for it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from chalicelib.core.context import CallContext

Resolver = Callable[[CallContext, str, str], AbstractContextManager[bytes]]
"""(ctx, purpose, upload locator) -> the checked file, claimed for the request while the block runs (freed again
if it raises); raises the uploads' 4xx when the upload does not fit."""

_resolver: list[Resolver] = []


def wire(resolver: Resolver) -> None:
    _resolver[:] = [resolver]


def referenced_file(ctx: CallContext, purpose: str, locator: str) -> AbstractContextManager[bytes]:
    if not _resolver:
        raise RuntimeError("no uploads are wired: app.py wires them")
    return _resolver[0](ctx, purpose, locator)
