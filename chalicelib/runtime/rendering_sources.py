"""The rendering data of records that domains above documents own (an invoice is billing's), for the
documents domain's ad-hoc render, which imports no domain above its own: the owner's function is wired
by the composition root (app.py) under the reference type, and documents asks for it here. A generated
document does not need this: its owner hands the data over when it adds the document's job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.core.context import CallContext

Source = Callable[[CallContext, str], dict[str, Any]]
"""(ctx, the record's locator) -> its rendering data; raises the owner's not-found error."""

_sources: dict[str, Source] = {}


def wire(reference_type: str, source: Source) -> None:
    _sources[reference_type] = source


def rendering_data(ctx: CallContext, reference_type: str, locator: str) -> dict[str, Any] | None:
    """The record's rendering data from its owner; None when no owner was wired for the type."""
    source = _sources.get(reference_type)
    return source(ctx, locator) if source is not None else None
