"""Which configured documents a record gets, and their templates (pure: the model and the package's files
in, plans out).

A product lists its documents (`products.<P>.documents`); each names a `documents.<Name>` config
(DocumentConfigRef: format, rendering, scope, trigger, pageSize, portrait, margin, templateSnippets).
Invoice documents (`scope: invoice`) are those of the account type's `invoiceDocument`, else the
tenant's `defaultInvoiceDocument`. A document's template is `documents/<Name>/template.liquid` or
`template.vm` / `template.velocity` in the package, else the bootstrap resource (`documentTemplates`)
whose staticName is the document's; a snippet's likewise under `templateSnippets/<Name>/` or the
`documentTemplatesSnippets` resources. A custom font (`customFonts`) is the package's `fonts/<Name>.ttf`.
A `prerendered` document has no template: it is the `staticDocuments` bootstrap resource of its name,
delivered as is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any, Literal

from chalicelib.documents.models import DocumentFormat, DocumentTrigger

Engine = Literal["liquid", "velocity"]
TEMPLATE_SUFFIXES: dict[str, Engine] = {".liquid": "liquid", ".vm": "velocity", ".velocity": "velocity"}
RENDERED_FORMATS = frozenset({DocumentFormat.TEXT, DocumentFormat.TXT, DocumentFormat.HTML, DocumentFormat.PDF})
FONT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
STATIC_DOCUMENTS = "staticDocuments"
"""The bootstrap folder of prerendered documents' files."""
STEP_TRIGGERS = {
    "validate": DocumentTrigger.VALIDATED,
    "price": DocumentTrigger.PRICED,
    "underwrite": DocumentTrigger.UNDERWRITTEN,
    "accept": DocumentTrigger.ACCEPTED,
    "issue": DocumentTrigger.ISSUED,
}


@dataclass(frozen=True)
class Template:
    engine: Engine
    source: str


@dataclass(frozen=True)
class Planned:
    """One document to generate: its config and where its template comes from."""

    static_name: str
    display_name: str
    output_format: DocumentFormat
    trigger: DocumentTrigger
    page: dict[str, Any]
    scope: str
    snippets: tuple[str, ...] = field(default=())
    fonts: tuple[str, ...] = field(default=())
    """The custom fonts the PDF may use: the document's `customFonts`, then the tenant's."""
    prerendered: bool = False
    """`rendering: prerendered`: the package's file, delivered as is."""


def configured(model: Mapping[str, Any], name: str) -> Planned | None:
    config = (model.get("documents") or {}).get(name)
    if not isinstance(config, dict):
        return None
    try:
        output_format = DocumentFormat(str(config.get("format", "pdf")))
        trigger = DocumentTrigger(str(config.get("trigger", "issued")))
    except ValueError:
        return None
    prerendered = config.get("rendering") == "prerendered"
    if output_format not in RENDERED_FORMATS and not prerendered:
        output_format = DocumentFormat.PDF
    snippets = tuple(str(snippet) for snippet in config.get("templateSnippets") or [] if isinstance(snippet, str))
    fonts = tuple(
        dict.fromkeys(
            str(font)
            for font in [*(config.get("customFonts") or []), *(model.get("customFonts") or [])]
            if isinstance(font, str)
        )
    )
    return Planned(
        name,
        str(config.get("displayName") or name),
        output_format,
        trigger,
        page_of(config),
        str(config.get("scope", "policy")),
        snippets,
        fonts,
        prerendered,
    )


def for_product(model: Mapping[str, Any], product: str | None, trigger: DocumentTrigger) -> list[Planned]:
    """The product's documents (not invoice-scoped) generated at `trigger`, in the product's order."""
    names = ((model.get("products") or {}).get(product or "") or {}).get("documents") or []
    plans = [configured(model, name) for name in names if isinstance(name, str)]
    return [plan for plan in plans if plan is not None and plan.trigger == trigger and plan.scope != "invoice"]


def triggers_of_product(model: Mapping[str, Any], product: str | None) -> frozenset[DocumentTrigger]:
    names = ((model.get("products") or {}).get(product or "") or {}).get("documents") or []
    plans = [configured(model, name) for name in names if isinstance(name, str)]
    return frozenset(plan.trigger for plan in plans if plan is not None)


def invoice_document(model: Mapping[str, Any], account_type: str | None) -> Planned | None:
    account = (model.get("accounts") or {}).get(account_type or "") or {}
    name = account.get("invoiceDocument") or model.get("defaultInvoiceDocument")
    return configured(model, name) if isinstance(name, str) else None


def page_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """pageSize, portrait and the margin (DocumentMarginRef, millimetres) as the renderer's page."""
    given = config.get("margin")
    margin: Mapping[str, Any] = given if isinstance(given, dict) else {}
    sides = [margin.get(side, Decimal("19.05")) for side in ("top", "right", "bottom", "left")]
    return {
        "pageSize": str(config.get("pageSize") or "letter"),
        "portrait": config.get("portrait", True) is not False,
        "margin": " ".join(f"{Decimal(str(side))}mm" for side in sides),
    }


def template_in_package(files: Mapping[str, bytes], folder: str, name: str) -> Template | None:
    """`<folder>/<name>/template.<liquid|vm|velocity>` among the package's files."""
    for suffix, engine in TEMPLATE_SUFFIXES.items():
        content = files.get(f"{folder}/{name}/template{suffix}")
        if content is not None:
            return Template(engine, content.decode("utf-8", "replace"))
    return None


def font_path(name: str) -> str | None:
    """Where the package holds the custom font `name` (a TrueType file); None for a name that is no
    identifier (it becomes a file name and a CSS family)."""
    return f"fonts/{name}.ttf" if FONT_NAME.fullmatch(name) else None


def engine_of(path: str) -> Engine | None:
    return TEMPLATE_SUFFIXES.get(PurePosixPath(path).suffix)


def format_of(path: str) -> DocumentFormat | None:
    """The format a file's extension names (`Forms01.pdf` -> pdf), if it names one."""
    try:
        return DocumentFormat(PurePosixPath(path).suffix.lstrip(".").lower())
    except ValueError:
        return None


def missing_template(name: str) -> str:
    """What a dynamic document without a template lacks (its renderError)."""
    return (
        f"document {name} has no template: the package holds neither documents/{name}/template.liquid "
        f"(or template.vm, template.velocity) nor a bootstrap resource in documentTemplates/ whose staticName "
        f"is {name}"
    )


def missing_static_document(name: str) -> str:
    """What a prerendered document without its file lacks (its renderError)."""
    return (
        f"document {name} is prerendered but has no file: the tenant's package held no bootstrap resource "
        f"in {STATIC_DOCUMENTS}/ whose staticName is {name}"
    )
