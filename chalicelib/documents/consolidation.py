"""Consolidated documents (`consolidatedDocuments.<Name>`, ConsolidatedDocumentConfigRef): one document
joining the parts it lists, made once every part a job generated is ready. PDFs are joined page by page
(pypdf), HTML by concatenating the parts' bodies, text with a blank line between parts; parts of different
formats cannot be joined. Pure: the model and the parts' files in, the joined file out."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.documents.models import DocumentFormat

TEXT_FORMATS = frozenset({DocumentFormat.TEXT, DocumentFormat.TXT})
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Consolidation:
    static_name: str
    display_name: str
    parts: tuple[str, ...]


class CannotJoin(Exception):
    """The parts cannot make one file (mixed formats, or a PDF that does not parse)."""


def consolidations(model: Mapping[str, Any], generated: set[str]) -> list[Consolidation]:
    """The configured consolidations all of whose parts are among the `generated` static names."""
    found = []
    for name, config in (model.get("consolidatedDocuments") or {}).items():
        parts = tuple(str(part) for part in (config or {}).get("consolidatedDocuments") or [])
        if parts and set(parts) <= generated:
            found.append(Consolidation(name, str(config.get("displayName") or name), parts))
    return found


def joined(formats: list[DocumentFormat], contents: list[bytes]) -> tuple[DocumentFormat, bytes]:
    """The parts, in order, as one file of their common format."""
    kinds = {DocumentFormat.TEXT if found in TEXT_FORMATS else found for found in formats}
    if len(kinds) != 1:
        raise CannotJoin(f"parts of different formats cannot be joined: {', '.join(sorted(map(str, formats)))}")
    kind = kinds.pop()
    if kind == DocumentFormat.PDF:
        return DocumentFormat.PDF, _joined_pdf(contents)
    if kind == DocumentFormat.HTML:
        return DocumentFormat.HTML, _joined_html(contents)
    if kind == DocumentFormat.TEXT:
        return formats[0], b"\n\n".join(contents)
    raise CannotJoin(f"{kind} documents cannot be joined")


def _joined_pdf(contents: list[bytes]) -> bytes:
    from pypdf import PdfReader, PdfWriter
    from pypdf.errors import PyPdfError

    writer = PdfWriter()
    try:
        for content in contents:
            writer.append(PdfReader(io.BytesIO(content)))
    except PyPdfError as error:
        raise CannotJoin(f"a part is not a readable PDF: {error}") from None
    output = io.BytesIO()
    writer.write(output)
    return output.getvalue()


def _joined_html(contents: list[bytes]) -> bytes:
    bodies = []
    for content in contents:
        text = content.decode("utf-8", "replace")
        body = _BODY.search(text)
        bodies.append(body.group(1) if body else text)
    return ("<html><body>" + "\n".join(bodies) + "</body></html>").encode("utf-8")
